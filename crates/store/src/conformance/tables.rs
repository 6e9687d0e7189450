//! Tables: created once with their card's code, named once per shop, and
//! seated by the session whose label is their name.

use ordergate_domain::Rejection;
use ordergate_domain::table::{NewTable, Table, TableState};
use uuid::Uuid;

use super::helpers::*;
use crate::{Answer, StaffWrite, Store, StoredResponse};

fn new_table(shop_id: Uuid, name: &str) -> Table {
    NewTable { name: name.into() }
        .validate(shop_id, instant())
        .expect("a valid table")
}

fn created(_: &Table) -> StoredResponse {
    StoredResponse {
        status: 201,
        body: "{}".into(),
        location: None,
    }
}

async fn create(store: &dyn Store, table: &Table) -> Result<Answer, crate::StoreError> {
    let write = StaffWrite::CreateTable(table.clone(), Box::new(created));
    store.staff_write(write, None, instant()).await
}

/// A table is found by its shop and by its card's code, free until a
/// session is opened under its name and free again after checkout; a
/// second table of the same name is refused and changes nothing.
pub async fn tables_are_named_once_found_by_code_and_seated_by_name(store: &dyn Store) {
    let shop = new_shop(store).await;
    let (t4, t1) = (new_table(shop.shop_id, "T4"), new_table(shop.shop_id, "T1"));
    for table in [&t4, &t1] {
        ok(create(store, table).await);
    }
    let free = |table: &Table| TableState {
        table: table.clone(),
        session_id: None,
    };
    assert_eq!(
        ok(store.tables(shop.shop_id).await),
        [free(&t1), free(&t4)],
        "by name"
    );
    assert_eq!(ok(store.table_by_code(&t4.code).await), Some(free(&t4)));
    assert_eq!(
        ok(store
            .table_by_code(&new_table(shop.shop_id, "x").code)
            .await),
        None
    );

    let again = new_table(shop.shop_id, "T4");
    assert_eq!(
        rejected(create(store, &again).await),
        Rejection::TableNameTaken { name: "T4".into() }
    );
    assert_eq!(ok(store.table_by_code(&again.code).await), None);
    let elsewhere = new_shop(store).await;
    ok(create(store, &new_table(elsewhere.shop_id, "T4")).await);
    assert_eq!(
        rejected(create(store, &new_table(Uuid::new_v4(), "T9")).await),
        Rejection::NotFound("shop")
    );

    let party = open_table(store, shop.shop_id, "T4").await;
    let seated = TableState {
        table: t4.clone(),
        session_id: Some(party.session_id),
    };
    assert_eq!(
        ok(store.table_by_code(&t4.code).await),
        Some(seated.clone())
    );
    assert_eq!(ok(store.tables(shop.shop_id).await), [free(&t1), seated]);
    assert_eq!(
        ok(store.tables(elsewhere.shop_id).await)[0].session_id,
        None,
        "another shop's T4 is another table"
    );
    ok(store.checkout(party.session_id, instant() + secs(60)).await);
    assert_eq!(ok(store.table_by_code(&t4.code).await), Some(free(&t4)));
}
