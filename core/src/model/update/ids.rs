//! Identifiers with a shape: template ids and event ids.

use alloc::string::{String, ToString};
use core::fmt;

use crate::model::value::Source;

/// A template (or interface) id, `<package-id>:<Module.Path>:<Entity>`. The node
/// matches templates by their [qualified name](TemplateId::qualified_name) and
/// ignores the package id ([`crate::model::names`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TemplateId {
    text: String,
    /// Where the qualified name starts (after the first colon): found once, as the
    /// node asks for the qualified name of every event it applies, and the package id
    /// before it is 64 characters long.
    qualified: usize,
}

/// Why a text is not a [`TemplateId`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemplateIdError;

impl fmt::Display for TemplateIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "expected a template id <package-id>:<Module.Path>:<Entity>, three non-empty parts separated by colons",
        )
    }
}

impl core::error::Error for TemplateIdError {}

impl TemplateId {
    /// Checks the `<package-id>:<Module.Path>:<Entity>` form.
    pub fn parse(text: &str) -> Result<Self, TemplateIdError> {
        let mut parts = text.split(':');
        let well_formed = parts.by_ref().take(3).filter(|p| !p.is_empty()).count() == 3 && parts.next().is_none();
        match text.find(':') {
            Some(colon) if well_formed => Ok(TemplateId { text: String::from(text), qualified: colon + 1 }),
            _ => Err(TemplateIdError),
        }
    }

    /// Reads a template id string from `source`.
    pub(crate) fn read<'s, S: Source<'s>>(source: &mut S) -> Result<Self, S::Error> {
        let text = source.string()?;
        TemplateId::parse(text).map_err(|e| source.error(|| e.to_string()))
    }

    /// The whole id, as on the wire.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The package id (before the first colon).
    pub fn package_id(&self) -> &str {
        self.split().0
    }

    /// `<Module.Path>:<Entity>`, the part the node matches on.
    pub fn qualified_name(&self) -> &str {
        self.split().1
    }

    /// The module path (`Platform.Round`).
    pub fn module_name(&self) -> &str {
        self.qualified_name().split_once(':').map_or("", |(module, _)| module)
    }

    /// The entity name (`OpenMiningRound`).
    pub fn entity_name(&self) -> &str {
        self.qualified_name().split_once(':').map_or("", |(_, entity)| entity)
    }

    fn split(&self) -> (&str, &str) {
        // `parse` found the first colon, just before `qualified`.
        let (package, qualified) = self.text.split_at_checked(self.qualified).unwrap_or((&self.text, ""));
        (package.strip_suffix(':').unwrap_or(package), qualified)
    }
}

impl fmt::Display for TemplateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether `event_id` has the form `<update_id>:<n>`, `n` a non-negative decimal integer.
pub fn is_event_id_of(event_id: &str, update_id: &str) -> bool {
    event_id
        .strip_prefix(update_id)
        .and_then(|rest| rest.strip_prefix(':'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_ids_have_three_parts() {
        let id = TemplateId::parse("abc123:Platform.Round:OpenMiningRound").unwrap();
        assert_eq!(id.package_id(), "abc123");
        assert_eq!(id.qualified_name(), "Platform.Round:OpenMiningRound");
        assert_eq!(id.module_name(), "Platform.Round");
        assert_eq!(id.entity_name(), "OpenMiningRound");
        assert_eq!(id.as_str(), "abc123:Platform.Round:OpenMiningRound");
        let named = TemplateId::parse("#platform:M:E.Nested").unwrap();
        assert_eq!(named.package_id(), "#platform");
        assert_eq!(named.entity_name(), "E.Nested");
        for bad in [
            "",
            "Platform.Round:OpenMiningRound",
            "pkg:Platform.Round:",
            ":Platform.Round:E",
            "pkg::E",
            "pkg:M:E:X",
            "pkg:M:E:",
            "pkg",
        ] {
            assert_eq!(TemplateId::parse(bad), Err(TemplateIdError), "{bad}");
        }
    }

    #[test]
    fn event_ids_are_the_update_id_and_a_number() {
        assert!(is_event_id_of("u1:0", "u1"));
        assert!(is_event_id_of("u1:12", "u1"));
        assert!(is_event_id_of("a:b:3", "a:b"));
        for bad in ["u1", "u1:", "u1:x", "u1:-1", "u1:1.0", "u2:1", "u1::1", "u11:1", ":1", "u1:1 "] {
            assert!(!is_event_id_of(bad, "u1"), "{bad}");
        }
    }
}
