//! Who is calling: the credentials of admin and wallet calls.

pub mod jwt;
