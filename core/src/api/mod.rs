//! The API: requests, responses, routing, authentication and the endpoints.

pub mod admin;
pub mod auth;
pub mod export;
pub mod health;
pub mod history;
pub mod hosting;
pub mod http;
pub mod openapi;
pub mod registry;
pub mod route;
pub mod scan;
pub mod state;
pub mod version;
pub mod wallet;
