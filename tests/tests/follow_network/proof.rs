//! What "byte for byte" allows: a public follower's answer is compared with the answer
//! of a node fed the same history by ingest, byte for byte, with only the fields the
//! network's public API does not carry taken out of both first. Those fields, and
//! nothing else:
//!
//! - a reassignment's `offset` (the network gives offsets in version 1 only);
//! - the `workflow_id` of an import update (a transaction recorded at
//!   `0001-01-01T00:00:00.000000Z`);
//! - a transaction's `external_transaction_hash` (an upstream may withhold it).
//!
//! They are taken out of the text itself: every other byte (the order of keys, the
//! spelling of numbers and escapes, white space) stays as the node wrote it. An answer that
//! is not JSON is compared as it is.

/// The record time of every import update.
const IMPORT_RECORD_TIME: &str = "\"0001-01-01T00:00:00.000000Z\"";

/// `body` with the fields the public API does not carry taken out (see the module
/// docs); `body` itself when it is not JSON.
pub fn without_withheld_fields(body: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(body) else { return body.to_vec() };
    let mut scanner = Scanner { text, at: 0 };
    let mut out = String::with_capacity(text.len());
    scanner.skip_space(&mut out);
    if scanner.value(&mut out).is_none() {
        return body.to_vec();
    }
    scanner.skip_space(&mut out);
    if scanner.at != text.len() {
        return body.to_vec();
    }
    out.into_bytes()
}

/// Which members of an object (its keys, with each value's text) are left out.
fn withheld(members: &[(&str, String)]) -> Vec<&'static str> {
    let has = |key: &str| members.iter().any(|(k, _)| *k == key);
    let value = |key: &str| members.iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_str());
    if !has("update_id") {
        return Vec::new();
    }
    let transaction = has("events_by_id");
    let reassignment = has("event") && !transaction;
    let mut left_out = Vec::new();
    if reassignment {
        left_out.push("offset");
    }
    if transaction && value("record_time") == Some(IMPORT_RECORD_TIME) {
        left_out.push("workflow_id");
    }
    if transaction {
        left_out.push("external_transaction_hash");
    }
    left_out
}

/// A scanner of one JSON text that copies it out, leaving out withheld members.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_space(&mut self, out: &mut String) {
        let start = self.at;
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
        out.push_str(&self.text[start..self.at]);
    }

    /// Copies one value into `out`; `None` if the text is not JSON here.
    fn value(&mut self, out: &mut String) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(out),
            b'[' => self.array(out),
            b'"' => {
                let start = self.at;
                self.string()?;
                out.push_str(&self.text[start..self.at]);
                Some(())
            }
            _ => {
                let start = self.at;
                while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'E')) {
                    self.at += 1;
                }
                (self.at > start).then(|| out.push_str(&self.text[start..self.at]))
            }
        }
    }

    /// Steps over a string, escapes included.
    fn string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
    }

    fn array(&mut self, out: &mut String) -> Option<()> {
        out.push('[');
        self.at += 1;
        self.skip_space(out);
        if self.peek()? == b']' {
            self.at += 1;
            out.push(']');
            return Some(());
        }
        loop {
            self.value(out)?;
            self.skip_space(out);
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    out.push(',');
                    self.skip_space(out);
                }
                b']' => {
                    self.at += 1;
                    out.push(']');
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An object: each member copied (its value scanned in turn), then written out
    /// without the withheld ones.
    fn object(&mut self, out: &mut String) -> Option<()> {
        self.at += 1;
        // Each member's key, and its text from after the `{` or `,` before it to the
        // `,` or `}` after it.
        let mut members: Vec<(&str, String)> = Vec::new();
        let mut values: Vec<String> = Vec::new();
        let text = self.text;
        let mut member = String::new();
        self.skip_space(&mut member);
        if self.peek()? == b'}' {
            self.at += 1;
            out.push('{');
            out.push_str(&member);
            out.push('}');
            return Some(());
        }
        loop {
            self.skip_space(&mut member);
            let start = self.at;
            self.string()?;
            let key = text.get(start + 1..self.at - 1)?;
            member.push_str(&text[start..self.at]);
            self.skip_space(&mut member);
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            member.push(':');
            self.skip_space(&mut member);
            let mut value = String::new();
            self.value(&mut value)?;
            member.push_str(&value);
            self.skip_space(&mut member);
            members.push((key, std::mem::take(&mut member)));
            values.push(value);
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    break;
                }
                _ => return None,
            }
        }
        let keyed: Vec<(&str, String)> = members.iter().map(|(k, _)| *k).zip(values).collect();
        let left_out = withheld(&keyed);
        let kept: Vec<&str> =
            members.iter().filter(|(key, _)| !left_out.contains(key)).map(|(_, text)| text.as_str()).collect();
        out.push('{');
        out.push_str(&kept.join(","));
        out.push('}');
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::without_withheld_fields;

    fn strip(text: &str) -> String {
        String::from_utf8(without_withheld_fields(text.as_bytes())).expect("UTF-8")
    }

    #[test]
    fn only_the_withheld_fields_of_updates_are_taken_out() {
        let page = concat!(
            r#"{"transactions":[{"update_id":"r","offset":"000000000000000042","record_time":"2024-01-01T00:00:00.000000Z","event":{"offset":"x"}},"#,
            r#"{"update_id":"i","migration_id":1,"workflow_id":"w","record_time":"0001-01-01T00:00:00.000000Z","events_by_id":{}},"#,
            r#"{"offset":"000000000000000001","update_id":"t","workflow_id":"w","record_time":"2024-01-01T00:00:00.000000Z","events_by_id":{"t:0":{"x":1.50e3}},"external_transaction_hash":"ab"}],"#,
            r#""offset":"kept","workflow_id":"kept"}"#
        );
        assert_eq!(
            strip(page),
            concat!(
                r#"{"transactions":[{"update_id":"r","record_time":"2024-01-01T00:00:00.000000Z","event":{"offset":"x"}},"#,
                r#"{"update_id":"i","migration_id":1,"record_time":"0001-01-01T00:00:00.000000Z","events_by_id":{}},"#,
                r#"{"offset":"000000000000000001","update_id":"t","workflow_id":"w","record_time":"2024-01-01T00:00:00.000000Z","events_by_id":{"t:0":{"x":1.50e3}}}],"#,
                r#""offset":"kept","workflow_id":"kept"}"#
            )
        );
    }

    #[test]
    fn other_bytes_are_kept_as_written_and_what_is_not_json_is_left_alone() {
        let text = r#"{ "b" : "\"é\u00e9", "a":[1, 2,{ }],"c":null }"#;
        assert_eq!(strip(text), text);
        let update = r#"{ "update_id":"r", "offset" : "1", "event":{} }"#;
        assert_eq!(strip(update), r#"{ "update_id":"r", "event":{} }"#);
        assert_eq!(strip("not json"), "not json");
        assert_eq!(strip(r#"{"a":1} trailing"#), r#"{"a":1} trailing"#);
    }
}
