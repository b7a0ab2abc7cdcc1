//! A plain HTTP client of a node on loopback.

use std::time::Duration;

use serde_json::Value;

use super::reads::Read;

/// A node's client.
#[derive(Debug, Clone)]
pub struct Client {
    agent: ureq::Agent,
    /// Its base URL, `http://127.0.0.1:PORT`.
    pub base: String,
}

/// An answer: status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON; panics showing it when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The start of the body, for messages.
    pub fn shown(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        let end = text.char_indices().nth(400).map_or(text.len(), |(at, _)| at);
        format!("{} {}", self.status, &text[..end])
    }
}

impl Client {
    pub fn new(base: impl Into<String>) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build();
        Client { agent: ureq::Agent::new_with_config(config), base: base.into() }
    }

    /// Sends `read`; panics if no answer comes.
    pub fn send(&self, read: &Read) -> Answer {
        let url = format!("{}{}", self.base, read.target);
        let answer = match &read.body {
            None => self.agent.get(&url).call(),
            Some(body) => self.agent.post(&url).header("content-type", "application/json").send(body.as_bytes()),
        };
        let mut answer = answer.unwrap_or_else(|e| panic!("{} {url}: {e}", read.method));
        let status = answer.status().as_u16();
        let body = answer.body_mut().with_config().limit(u64::MAX).read_to_vec().expect("a body");
        Answer { status, body }
    }

    pub fn get(&self, target: &str) -> Answer {
        self.send(&Read::get(target))
    }
}
