//! Citus clusters the tests start for themselves, on ports of their own,
//! and then change under load: a worker dies and comes back, a worker
//! joins and shops move onto it. Without `ORDERGATE_TEST_CITUS_URL` (no
//! Citus on this machine) every test passes after saying on stderr that it
//! was skipped.

// The HTTP suite's harness; each binary uses its own part of it.
#[allow(dead_code)]
#[path = "../api/database.rs"]
mod database;
#[allow(dead_code)]
#[path = "../api/helpers.rs"]
mod helpers;
#[allow(dead_code)]
#[path = "../api/sse.rs"]
mod sse;

mod cluster;
mod growth;
mod outage;
