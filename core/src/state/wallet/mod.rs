//! The wallet's state: buy-traffic requests as stored ([`record`]) and what becomes of
//! them ([`outcome`]). Its endpoints are [`crate::api::wallet`].

pub mod outcome;
pub mod record;
