//! The backend conformance suite: what every [`Store`] must do, whatever
//! database sits behind it.
//!
//! Each check is a public async function. Most take `&dyn Store`; the
//! concurrency checks take an `Arc<dyn Store>` so they can hammer one store
//! from many tokio tasks at once. A backend runs the whole suite, unchanged,
//! from one of its integration tests:
//!
//! ```ignore
//! // crates/store-foo/tests/conformance.rs
//! async fn fresh_store() -> (FooStore, TempDir) {
//!     let dir = tempfile::tempdir().unwrap();
//!     let store = FooStore::open(&dir.path().join("db")).unwrap();
//!     (store, dir)
//! }
//!
//! ordergate_store::conformance_tests!(fresh_store());
//! ```
//!
//! The factory expression is awaited once per test and must yield
//! `(store, guard)`: `store` is anything that implements [`IntoSharedStore`]
//! (a concrete store, `Box<dyn Store>` or `Arc<dyn Store>`), and `guard` is
//! whatever must live as long as the store (a temporary directory, a
//! throwaway database), dropped after it. Each test gets a fresh store, so
//! checks never see each other's rows. The calling crate needs `tokio` (with
//! the multi-threaded runtime and macros) as a dev-dependency, because the
//! tests are `#[tokio::test]`s.
//!
//! A backend that needs something the machine may not have (a database
//! server) can yield `Option<(store, guard)>` instead: on `None` the test
//! passes without running its check, so the factory should say on stderr
//! that it skipped and why (see [`Fixture`]).
//!
//! Every check asserts exact values, and every check can fail: each one
//! names the rule it guards.

mod accounts;
mod admission;
mod audit;
mod catalog;
mod concurrency;
mod guest_access;
mod helpers;
mod idempotency;
mod inventory;
mod kitchen;
mod languages;
mod options;
mod orders;
mod photos;
mod pins;
mod printers;
mod service;
mod sessions;
mod shops;
mod stock;
mod tables;

use std::sync::Arc;

pub use accounts::*;
pub use admission::*;
pub use audit::*;
pub use catalog::*;
pub use concurrency::*;
pub use guest_access::*;
pub use helpers::receipt;
pub use idempotency::*;
pub use inventory::*;
pub use kitchen::*;
pub use languages::*;
pub use options::*;
pub use orders::*;
pub use photos::*;
pub use pins::*;
pub use printers::*;
pub use service::*;
pub use sessions::*;
pub use shops::*;
pub use stock::*;
pub use tables::*;

use crate::Store;

/// What a conformance factory may hand back as its store.
pub trait IntoSharedStore {
    fn into_shared(self) -> Arc<dyn Store>;
}

impl<S: Store> IntoSharedStore for S {
    fn into_shared(self) -> Arc<dyn Store> {
        Arc::new(self)
    }
}

impl IntoSharedStore for Arc<dyn Store> {
    fn into_shared(self) -> Arc<dyn Store> {
        self
    }
}

impl IntoSharedStore for Box<dyn Store> {
    fn into_shared(self) -> Arc<dyn Store> {
        Arc::from(self)
    }
}

/// What a conformance factory yields: `(store, guard)`, or an `Option` of
/// one when the backend may be unavailable (`None` skips the check).
pub trait Fixture {
    type Guard;
    fn into_fixture(self) -> Option<(Arc<dyn Store>, Self::Guard)>;
}

impl<S: IntoSharedStore, G> Fixture for (S, G) {
    type Guard = G;
    fn into_fixture(self) -> Option<(Arc<dyn Store>, G)> {
        Some((self.0.into_shared(), self.1))
    }
}

impl<S: IntoSharedStore, G> Fixture for Option<(S, G)> {
    type Guard = G;
    fn into_fixture(self) -> Option<(Arc<dyn Store>, G)> {
        self.and_then(Fixture::into_fixture)
    }
}

/// Expands to one `#[tokio::test]` per conformance check, each on a fresh
/// store from the factory expression (see the [module docs](crate::conformance)).
///
/// A new check must be listed here too (`checks` take `&dyn Store`,
/// `shared_checks` take `Arc<dyn Store>`); a unit test below fails when one
/// is missing.
#[macro_export]
macro_rules! conformance_tests {
    ($factory:expr $(,)?) => {
        $crate::__conformance_tests! {
            factory: $factory;
            checks: [
                store_answers_ping,
                shops_round_trip_through_create_get_and_list,
                get_shop_of_an_unknown_id_is_none,
                catalog_first_put_is_version_one_keeping_given_ids_and_assigning_missing_ones,
                catalog_put_retires_items_left_out,
                catalog_put_restores_a_retired_item_with_its_stock,
                catalog_put_cannot_change_the_kind_of_an_id,
                catalog_items_keep_their_details_and_the_menu_shows_them,
                catalog_put_against_a_stale_version_is_refused_and_changes_nothing,
                catalog_put_for_an_unknown_shop_is_not_found,
                catalog_never_published_is_version_zero_and_empty,
                menu_source_is_not_ready_until_a_catalog_is_published,
                reads_of_an_unknown_shop_are_not_found,
                inventory_of_new_ids_starts_untracked_at_version_one,
                inventory_set_stock_writes_one_set_log_row,
                inventory_86_alone_bumps_the_version_without_a_log_row,
                inventory_unchanged_update_keeps_the_version,
                inventory_restock_adds_and_logs_a_restock_row,
                inventory_restock_of_untracked_stock_is_rejected,
                inventory_restock_outside_its_bounds_is_a_validation_error,
                inventory_log_is_newest_first_and_respects_the_limit,
                inventory_log_deltas_sum_to_the_stock_of_every_item,
                inventory_log_lists_only_its_own_shop,
                inventory_changes_to_an_unknown_item_are_not_found,
                shops_sharing_an_item_id_keep_separate_catalogs_and_inventory,
                session_open_then_get_round_trips,
                session_open_on_an_occupied_table_is_table_occupied,
                session_table_can_be_opened_again_after_checkout,
                session_list_filters_by_status_newest_first_within_the_limit,
                checkout_twice_returns_the_same_bill,
                session_operations_on_unknown_ids_are_not_found,
                pin_right_pin_is_accepted,
                pin_lock_after_max_failures_refuses_even_the_right_pin,
                pin_lock_lapses_after_its_until_and_the_count_restarts,
                pin_missing_pin_is_invalid_but_not_counted,
                pin_success_resets_the_failure_count,
                order_placed_is_priced_from_the_catalog_and_numbered_from_one,
                committed_replay_answers_only_a_completed_matching_request,
                order_tickets_restart_at_midnight_in_the_shop_timezone,
                order_history_is_newest_first_and_the_bill_oldest_first,
                order_replay_returns_the_first_response_and_places_nothing,
                order_key_reused_for_another_request_is_refused,
                order_same_key_in_another_scope_is_another_order,
                order_key_past_its_expiry_is_a_new_key,
                staff_orders_skip_the_guest_rules,
                order_for_an_unknown_session_is_not_found_and_not_audited,
                order_with_a_wrong_pin_is_refused_and_counted,
                order_while_the_pin_is_locked_is_pin_locked,
                order_to_a_closed_session_is_refused_but_earlier_keys_replay,
                order_duplicate_payload_from_one_client_is_refused_with_the_original,
                order_cooldown_holds_one_client_until_it_lapses,
                order_past_its_busy_deadline_is_session_busy_but_replays_replay,
                order_before_a_catalog_is_published_is_catalog_not_ready,
                order_for_an_unknown_menu_item_names_its_line,
                order_for_a_retired_item_is_item_unavailable,
                order_with_a_topping_not_offered_is_invalid_topping,
                order_takes_stock_per_unit_of_items_and_toppings,
                staff_order_stock_is_logged_under_staff,
                order_short_of_stock_names_every_shortage_and_changes_nothing,
                order_of_an_86ed_item_is_out_of_stock_even_when_untracked,
                audit_records_one_row_for_every_order_outcome_past_the_credentials,
                audit_log_is_newest_first_within_the_limit_and_per_shop,
                record_audit_files_rows_of_known_sessions_only,
                idempotent_create_shop_runs_once_and_replays_its_response,
                idempotent_open_session_runs_once_and_replays_its_response,
                idempotent_restock_adds_once,
                staff_write_without_a_key_runs_every_time_and_keeps_no_record,
                idempotent_checkout_replays_the_first_bill,
                idempotent_key_reused_for_another_request_is_refused,
                idempotent_refused_writes_store_nothing,
                purge_expired_forgets_only_expired_records,
                status_moves_forward_skipping_steps_and_bumps_the_version_per_change,
                status_transitions_follow_the_contracts_table_for_every_pair,
                status_cancel_restores_every_item_and_topping_exactly_once,
                status_stale_expected_version_is_a_version_conflict_and_changes_nothing,
                status_of_an_unknown_order_is_not_found,
                shop_orders_filter_by_status_oldest_first_within_the_limit,
                events_every_write_appends_its_events_with_consecutive_ids,
                events_refused_and_unchanged_writes_append_nothing,
                events_are_numbered_and_kept_per_shop,
                idempotent_status_change_runs_once_and_replays_its_response,
                recall_undoes_the_last_advance_once_within_the_window,
                kitchen_pace_reads_when_each_recent_order_was_taken_and_ready,
                a_shop_keeps_the_kitchen_thresholds_it_sets,
                guest_token_opens_its_active_session_until_checkout_or_expiry,
                guest_access_judges_the_pin_and_records_a_token_only_when_accepted,
                unlock_clears_the_lock_and_the_failures,
                orders_with_a_guest_token_pass_a_pin_lock,
                refusals_that_judged_no_credentials_are_not_audited,
                a_closed_session_is_gone_for_guests_after_its_grace,
                a_session_places_at_most_its_limit_of_guest_orders_per_window,
                purge_audit_deletes_only_rows_before_the_cutoff_in_batches,
                catalog_option_groups_round_trip_and_options_are_inventory_entries,
                order_choices_are_judged_priced_and_kept_with_the_line,
                order_tracked_options_are_taken_short_named_and_given_back,
                order_options_are_part_of_the_fingerprint,
                shops_keep_their_languages_and_a_patch_changes_only_what_it_names,
                catalog_texts_keep_every_language_and_orders_use_the_default,
                photos_are_kept_byte_for_byte_and_found_by_id,
                catalog_items_name_only_photos_of_their_shop,
                tables_are_named_once_found_by_code_and_seated_by_name,
                service_requests_are_one_open_call_of_a_kind_acknowledged_once,
                a_keyed_service_call_replays_its_first_answer,
                printers_start_after_the_newest_event_and_record_each_step,
                a_reprint_is_an_event_of_the_printers_shop_for_its_order,
                members_join_by_a_new_or_an_existing_account_and_leave,
                staff_tokens_sign_in_until_they_expire_or_are_revoked,
                devices_sign_in_until_revoked_in_their_own_shop,
                every_owned_resource_knows_its_shop,
                login_attempts_are_counted_per_subject_in_a_window,
            ];
            shared_checks: [
                concurrent_opens_of_one_table_admit_exactly_one,
                concurrent_wrong_pins_lock_after_exactly_max_failures,
                concurrent_restocks_are_all_counted,
                concurrent_requests_with_one_key_place_one_order,
                concurrent_orders_for_scarce_stock_never_oversell,
                concurrent_duplicates_from_one_client_place_one_order,
                concurrent_cancels_of_one_order_restore_its_stock_once,
                concurrent_writes_get_consecutive_event_ids_per_shop,
                concurrent_login_attempts_judge_at_most_the_count,
            ];
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    (
        factory: $factory:expr;
        checks: [$($check:ident),* $(,)?];
        shared_checks: [$($shared:ident),* $(,)?];
    ) => {
        $(
            #[::tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $check() {
                let Some((store, guard)) = $crate::conformance::Fixture::into_fixture($factory.await)
                else {
                    return;
                };
                $crate::conformance::$check(&*store).await;
                ::std::mem::drop(store);
                ::std::mem::drop(guard);
            }
        )*
        $(
            #[::tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $shared() {
                let Some((store, guard)) = $crate::conformance::Fixture::into_fixture($factory.await)
                else {
                    return;
                };
                $crate::conformance::$shared(::std::sync::Arc::clone(&store)).await;
                ::std::mem::drop(store);
                ::std::mem::drop(guard);
            }
        )*
    };
}

#[cfg(test)]
mod tests {
    /// Every public check of the suite is run by `conformance_tests!`.
    #[test]
    fn every_check_is_listed_in_the_macro() {
        let (macro_body, _) = include_str!("mod.rs")
            .split_once("#[doc(hidden)]")
            .expect("the macro comes first");
        let checks: Vec<&str> = [
            include_str!("shops.rs"),
            include_str!("catalog.rs"),
            include_str!("inventory.rs"),
            include_str!("sessions.rs"),
            include_str!("pins.rs"),
            include_str!("concurrency.rs"),
            include_str!("orders.rs"),
            include_str!("admission.rs"),
            include_str!("stock.rs"),
            include_str!("audit.rs"),
            include_str!("idempotency.rs"),
            include_str!("kitchen.rs"),
            include_str!("guest_access.rs"),
        ]
        .iter()
        .flat_map(|source| source.lines())
        .filter_map(|line| line.strip_prefix("pub async fn "))
        .map(|rest| rest.split('(').next().unwrap_or_default())
        .collect();
        assert!(checks.len() > 70, "found only {checks:?}");
        for check in checks {
            assert!(
                macro_body.contains(&format!("                {check},\n")),
                "{check} is not listed in conformance_tests!"
            );
        }
    }
}
