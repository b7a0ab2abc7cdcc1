//! Several upstreams: what is applied is what enough of them said.
//!
//! Every request the follower makes upstream goes to each of the `n` upstreams. An
//! answer is taken when `agree` of them gave it byte for byte (by default f + 1, with
//! f = ⌊(n − 1)/3⌋ the upstreams that may be faulty: one honest upstream is then among
//! those that agree). A page of updates is taken item by item: the longest run of
//! updates from its start that `agree` upstreams sent alike, so an upstream that is
//! behind only shortens the page, and one that sent an update of its own making is
//! outvoted. Each upstream that answered otherwise is noted as a [`Disagreement`]; when
//! no answer has `agree` upstreams behind it, nothing is applied and following stops
//! with an error that names the upstreams and what they said.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::api::http::Response;

/// An upstream that answered otherwise than the answer taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The request, `METHOD path`.
    pub request: String,
    /// The upstreams (their index in the list given to [`super::sync`]) that answered otherwise.
    pub upstreams: Vec<usize>,
    /// The updates they sent otherwise (for a page of updates; empty for other answers).
    pub update_ids: Vec<String>,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: upstream(s) {:?} answered otherwise", self.request, self.upstreams)?;
        if !self.update_ids.is_empty() {
            write!(f, " (updates {})", self.update_ids.join(", "))?;
        }
        Ok(())
    }
}

/// How many of `n` upstreams must agree by default: f + 1, f = ⌊(n − 1)/3⌋.
pub fn default_agree(n: usize) -> usize {
    n.saturating_sub(1) / 3 + 1
}

/// The answer `agree` upstreams gave alike, and the upstreams that gave another; or
/// `Err` listing every answer.
pub(super) fn response(
    request: &str,
    answers: Vec<Result<Response, String>>,
    agree: usize,
) -> Result<(Response, Option<Disagreement>), String> {
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (n, answer) in answers.iter().enumerate() {
        let Ok(response) = answer else { continue };
        let same = groups.iter_mut().find(|(first, _)| {
            let Ok(other) = &answers[*first] else { return false };
            other.status == response.status && other.body == response.body
        });
        match same {
            Some((_, members)) => members.push(n),
            None => groups.push((n, alloc::vec![n])),
        }
    }
    let best = groups.iter().max_by_key(|(_, members)| members.len());
    match best {
        Some((first, members)) if members.len() >= agree => {
            let others: Vec<usize> =
                groups.iter().filter(|(f, _)| f != first).flat_map(|(_, m)| m.iter().copied()).collect();
            let disagreement = (!others.is_empty()).then(|| Disagreement {
                request: request.to_string(),
                upstreams: others,
                update_ids: Vec::new(),
            });
            let Some(Ok(response)) = answers.into_iter().nth(*first) else {
                return Err(format!("{request}: no answer")); // unreachable: groups hold answered upstreams
            };
            Ok((response, disagreement))
        }
        _ => Err(format!(
            "no {agree} of the {} upstreams gave the same answer to {request}: {}",
            answers.len(),
            describe(&answers)
        )),
    }
}

/// The run of items from the start of the pages that `agree` upstreams sent alike (the
/// longest such), and the upstreams that sent another item within it; `pages[n]` is
/// upstream n's items as `(update id, text)`, or why it has none.
pub(super) fn page(
    request: &str,
    pages: &[Result<Vec<(String, String)>, String>],
    agree: usize,
) -> Result<(usize, usize, Option<Disagreement>), String> {
    let answered: Vec<(usize, &Vec<(String, String)>)> =
        pages.iter().enumerate().filter_map(|(n, p)| p.as_ref().ok().map(|p| (n, p))).collect();
    let common = |a: &[(String, String)], b: &[(String, String)]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    // For each upstream's page, the longest start of it that `agree` pages share.
    let mut best: Option<(usize, usize)> = None;
    for (n, mine) in &answered {
        let mut shared: Vec<usize> = answered.iter().map(|(_, theirs)| common(mine, theirs)).collect();
        shared.sort_unstable_by(|a, b| b.cmp(a));
        if let Some(&length) = shared.get(agree.saturating_sub(1))
            && best.is_none_or(|(_, l)| length > l)
        {
            best = Some((*n, length));
        }
    }
    let Some((source, length)) = best else {
        return Err(format!(
            "no {agree} of the {} upstreams answered {request}: {}",
            pages.len(),
            describe_pages(pages)
        ));
    };
    let agreed = answered.iter().find(|(n, _)| *n == source).map_or(&[][..], |(_, p)| &p[..length]);
    // An upstream disagrees when it sent another item where the agreed run has one.
    let mut upstreams = Vec::new();
    let mut update_ids = Vec::new();
    for (n, theirs) in &answered {
        let differing: Vec<&str> =
            agreed.iter().zip(theirs.iter()).filter(|(a, b)| a != b).map(|(a, _)| a.0.as_str()).collect();
        if !differing.is_empty() {
            upstreams.push(*n);
            for id in differing {
                if !update_ids.iter().any(|held: &String| held == id) {
                    update_ids.push(id.to_string());
                }
            }
        }
    }
    // Pages that differ at their first item with no run agreed: no quorum.
    if length == 0 {
        let firsts: Vec<&(String, String)> = answered.iter().filter_map(|(_, p)| p.first()).collect();
        if firsts.windows(2).any(|w| w[0] != w[1]) {
            let ids: Vec<&str> = firsts.iter().map(|f| f.0.as_str()).collect();
            return Err(format!(
                "no {agree} of the {} upstreams sent the same first update to {request} (updates {}): {}",
                pages.len(),
                ids.join(", "),
                describe_pages(pages)
            ));
        }
    }
    let disagreement =
        (!upstreams.is_empty()).then(|| Disagreement { request: request.to_string(), upstreams, update_ids });
    Ok((source, length, disagreement))
}

fn describe(answers: &[Result<Response, String>]) -> String {
    let parts: Vec<String> = answers
        .iter()
        .enumerate()
        .map(|(n, a)| match a {
            Ok(r) => format!("upstream {n} answered {} ({} bytes)", r.status, r.body.len()),
            Err(e) => format!("upstream {n}: {e}"),
        })
        .collect();
    parts.join("; ")
}

fn describe_pages(pages: &[Result<Vec<(String, String)>, String>]) -> String {
    let parts: Vec<String> = pages
        .iter()
        .enumerate()
        .map(|(n, p)| match p {
            Ok(items) => format!("upstream {n} sent {} updates", items.len()),
            Err(e) => format!("upstream {n}: {e}"),
        })
        .collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;

    fn items(texts: &[&str]) -> Result<Vec<(String, String)>, String> {
        Ok(texts.iter().map(|t| (t.to_string(), format!("text of {t}"))).collect())
    }

    #[test]
    fn f_plus_one_agree_by_default() {
        assert_eq!([1, 2, 3, 4, 7].map(default_agree), [1, 1, 1, 2, 3]);
    }

    #[test]
    fn an_upstream_behind_shortens_the_page_and_a_tamperer_is_outvoted() {
        let mut tampered = items(&["a", "b", "c"]).expect("items");
        tampered[1].1 = "forged".into();
        let pages = [items(&["a", "b", "c"]), Ok(tampered), items(&["a", "b"]), items(&["a"])];
        let (source, length, disagreement) = page("POST /v2/updates", &pages, 2).expect("agreed");
        assert_eq!((source, length), (0, 2));
        let disagreement = disagreement.expect("the tamperer");
        assert_eq!((disagreement.upstreams, disagreement.update_ids), (vec![1], vec!["b".to_string()]));
    }

    #[test]
    fn pages_that_differ_from_their_start_have_no_quorum() {
        let mut tampered = items(&["a"]).expect("items");
        tampered[0].1 = "forged".into();
        let pages = [items(&["a"]), Ok(tampered), Err("unreachable".into())];
        let error = page("POST /v2/updates", &pages, 2).expect_err("no quorum");
        assert!(error.starts_with("no 2 of the 3 upstreams sent the same first update"), "{error}");
        assert!(error.contains("upstream 2: unreachable"), "{error}");
    }
}
