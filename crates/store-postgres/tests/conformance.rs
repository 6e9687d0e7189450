//! The backend conformance suite of `ordergate-store`, run against
//! PostgreSQL: every test gets a schema of its own in the database
//! `ORDERGATE_TEST_DATABASE_URL` names, dropped at its end. Without the
//! variable every test passes after saying on stderr that it was skipped.

mod support;

ordergate_store::conformance_tests!(support::fresh_store());
