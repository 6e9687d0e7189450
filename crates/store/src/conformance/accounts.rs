//! Staff accounts: added to shops by a new or an existing account, signed
//! in by tokens that expire or are revoked, and sign-in attempts counted
//! atomically per subject.

use std::sync::Arc;

use ordergate_domain::Rejection;
use ordergate_domain::staff::{Account, Device, LoginPolicy, Member, Membership, Role};
use uuid::Uuid;

use super::concurrency::all_at_once;
use super::helpers::*;
use crate::{Owned, Store};

fn account(username: &str) -> Account {
    Account {
        account_id: Uuid::new_v4(),
        username: username.into(),
        password_hash: format!("$argon2id$v=19$m=19456,t=2,p=1$fake${username}"),
        created_at: instant(),
    }
}

/// A username no other test of the run uses (accounts are global).
fn unique(name: &str) -> String {
    format!("{name}-{}", &Uuid::new_v4().simple().to_string()[..12])
}

pub async fn members_join_by_a_new_or_an_existing_account_and_leave(store: &dyn Store) {
    let (shop, other) = (new_shop(store).await, new_shop(store).await);
    let hana = account(&unique("hana"));
    let (member, created) = ok(store
        .add_member(
            shop.shop_id,
            hana.username.clone(),
            Some(hana.clone()),
            Role::Floor,
            instant(),
        )
        .await);
    let floor = Member {
        account_id: hana.account_id,
        username: hana.username.clone(),
        role: Role::Floor,
    };
    assert_eq!((member, created), (floor.clone(), true));
    assert_eq!(
        ok(store.account_by_username(&hana.username).await),
        Some(hana.clone())
    );
    let again = account(&hana.username);
    assert_eq!(
        rejected(
            store
                .add_member(
                    other.shop_id,
                    hana.username.clone(),
                    Some(again),
                    Role::Owner,
                    instant()
                )
                .await
        ),
        Rejection::UsernameTaken {
            username: hana.username.clone()
        }
    );
    assert_eq!(ok(store.members(other.shop_id).await), []);

    // The same account in another shop, and a new role where it is.
    let (kitchen, created) = ok(store
        .add_member(
            other.shop_id,
            hana.username.clone(),
            None,
            Role::Kitchen,
            instant(),
        )
        .await);
    assert!(created);
    assert_eq!(kitchen.role, Role::Kitchen);
    let (manager, created) = ok(store
        .add_member(
            shop.shop_id,
            hana.username.clone(),
            None,
            Role::Manager,
            instant(),
        )
        .await);
    assert!(!created, "already a member: the role changes");
    let kai = account(&unique("kai"));
    ok(store
        .add_member(
            shop.shop_id,
            kai.username.clone(),
            Some(kai.clone()),
            Role::Owner,
            instant(),
        )
        .await);
    let mut expected = vec![
        manager.clone(),
        Member {
            account_id: kai.account_id,
            username: kai.username.clone(),
            role: Role::Owner,
        },
    ];
    expected.sort_by(|a, b| a.username.cmp(&b.username));
    assert_eq!(ok(store.members(shop.shop_id).await), expected);

    assert_eq!(
        rejected(
            store
                .add_member(shop.shop_id, unique("nobody"), None, Role::Floor, instant())
                .await
        ),
        Rejection::NotFound("account")
    );
    assert_eq!(
        rejected(
            store
                .add_member(
                    Uuid::new_v4(),
                    hana.username.clone(),
                    None,
                    Role::Floor,
                    instant()
                )
                .await
        ),
        Rejection::NotFound("shop")
    );

    ok(store.remove_member(shop.shop_id, hana.account_id).await);
    assert_eq!(
        rejected(store.remove_member(shop.shop_id, hana.account_id).await),
        Rejection::NotFound("member")
    );
    assert_eq!(ok(store.members(shop.shop_id).await).len(), 1);
    assert_eq!(
        ok(store.members(other.shop_id).await),
        [kitchen],
        "the other shop keeps its member"
    );
}

pub async fn staff_tokens_sign_in_until_they_expire_or_are_revoked(store: &dyn Store) {
    let shop = new_shop(store).await;
    let kai = account(&unique("kai"));
    ok(store
        .add_member(
            shop.shop_id,
            kai.username.clone(),
            Some(kai.clone()),
            Role::Owner,
            instant(),
        )
        .await);
    let digest = format!("digest-{}", Uuid::new_v4());
    let expires_at = instant() + secs(60);
    ok(store
        .create_staff_token(digest.clone(), kai.account_id, instant(), expires_at)
        .await);
    let owner = vec![Membership {
        shop_id: shop.shop_id,
        role: Role::Owner,
    }];
    assert_eq!(
        ok(store.staff_token(&digest, instant()).await),
        Some((kai.clone(), owner))
    );
    assert_eq!(
        ok(store.staff_token(&digest, expires_at).await),
        None,
        "expired"
    );
    assert_eq!(ok(store.staff_token("another", instant()).await), None);

    let second = new_shop(store).await;
    ok(store
        .add_member(
            second.shop_id,
            kai.username.clone(),
            None,
            Role::Kitchen,
            instant(),
        )
        .await);
    ok(store.remove_member(shop.shop_id, kai.account_id).await);
    let kitchen = vec![Membership {
        shop_id: second.shop_id,
        role: Role::Kitchen,
    }];
    assert_eq!(
        ok(store.staff_token(&digest, instant()).await),
        Some((kai.clone(), kitchen)),
        "still signed in, to the shop it is still a member of"
    );
    ok(store.remove_member(second.shop_id, kai.account_id).await);
    assert_eq!(
        ok(store.staff_token(&digest, instant()).await),
        None,
        "a member of no shop is signed out"
    );

    let again = format!("digest-{}", Uuid::new_v4());
    ok(store
        .create_staff_token(again.clone(), kai.account_id, instant(), expires_at)
        .await);
    assert!(ok(store.staff_token(&again, instant()).await).is_some());
    ok(store.revoke_staff_token(&again).await);
    assert_eq!(ok(store.staff_token(&again, instant()).await), None);
    ok(store.revoke_staff_token(&again).await);

    // A new password keeps the token that set it and signs out the rest.
    let (here, there) = (
        format!("here-{}", Uuid::new_v4()),
        format!("there-{}", Uuid::new_v4()),
    );
    for digest in [&here, &there] {
        ok(store
            .create_staff_token(digest.clone(), kai.account_id, instant(), expires_at)
            .await);
    }
    ok(store
        .change_password(kai.account_id, "$argon2id$new".into(), here.clone())
        .await);
    let (account, _) = ok(store.staff_token(&here, instant()).await).expect("kept");
    assert_eq!(account.password_hash, "$argon2id$new");
    assert_eq!(ok(store.staff_token(&there, instant()).await), None);
    assert_eq!(
        rejected(
            store
                .change_password(Uuid::new_v4(), "$argon2id$x".into(), here)
                .await
        ),
        Rejection::NotFound("account")
    );
}

pub async fn devices_sign_in_until_revoked_in_their_own_shop(store: &dyn Store) {
    let (shop, other) = (new_shop(store).await, new_shop(store).await);
    let device = |shop_id: Uuid, name: &str, at: i64| Device {
        device_id: Uuid::new_v4(),
        shop_id,
        name: name.into(),
        role: Role::Kitchen,
        created_at: instant() + secs(at),
    };
    let pass = device(shop.shop_id, "Pass", 0);
    let tablet = Device {
        role: Role::Floor,
        ..device(shop.shop_id, "Tablet", 1)
    };
    let theirs = device(other.shop_id, "Pass", 0);
    for (device, digest) in [(&pass, "pass"), (&tablet, "tablet"), (&theirs, "theirs")] {
        let digest = format!("{digest}-{}", device.device_id);
        ok(store.create_device(device.clone(), digest).await);
    }
    assert_eq!(
        ok(store.devices(shop.shop_id).await),
        vec![pass.clone(), tablet.clone()],
        "oldest first, this shop's only"
    );
    let pass_digest = format!("pass-{}", pass.device_id);
    assert_eq!(
        ok(store.device_token(&pass_digest).await),
        Some(pass.clone())
    );
    assert_eq!(ok(store.device_token("nobody's").await), None);

    // Revoked only in its own shop.
    assert_eq!(
        rejected(store.revoke_device(other.shop_id, pass.device_id).await),
        Rejection::NotFound("device")
    );
    ok(store.revoke_device(shop.shop_id, pass.device_id).await);
    assert_eq!(ok(store.device_token(&pass_digest).await), None);
    assert_eq!(ok(store.devices(shop.shop_id).await), vec![tablet]);
    assert_eq!(
        rejected(store.revoke_device(shop.shop_id, pass.device_id).await),
        Rejection::NotFound("device")
    );
    assert_eq!(
        rejected(store.devices(Uuid::new_v4()).await),
        Rejection::NotFound("shop")
    );
    let stray = device(Uuid::new_v4(), "Stray", 0);
    assert_eq!(
        rejected(store.create_device(stray, "stray".into()).await),
        Rejection::NotFound("shop")
    );
}

pub async fn every_owned_resource_knows_its_shop(store: &dyn Store) {
    let p = published(store).await;
    let session = open_table(store, p.shop_id, "T1").await;
    let order = placed(
        store
            .place(staff_order(
                session.session_id,
                simple_order(p.curry, 1),
                instant(),
            ))
            .await,
    );
    for owned in [
        Owned::Session(session.session_id),
        Owned::Order(order.order_id),
    ] {
        assert_eq!(ok(store.shop_of(owned).await), Some(p.shop_id), "{owned:?}");
    }
    // The others' rows are each checked over HTTP (the matrix of
    // crates/server/tests/api/authorization.rs names one of each).
    for missing in [
        Owned::Session(Uuid::new_v4()),
        Owned::Order(Uuid::new_v4()),
        Owned::Printer(Uuid::new_v4()),
        Owned::ServiceRequest(Uuid::new_v4()),
    ] {
        assert_eq!(ok(store.shop_of(missing).await), None, "{missing:?}");
    }
}

fn policy() -> LoginPolicy {
    LoginPolicy {
        max_account_failures: 3,
        max_address_failures: 5,
        window: chrono::Duration::minutes(15),
    }
}

pub async fn login_attempts_are_counted_per_subject_in_a_window(store: &dyn Store) {
    let account = format!("account:{}", unique("hana"));
    let address = format!("address:{}", Uuid::new_v4());
    let subjects = vec![account.clone(), address.clone()];
    for n in 1..=3 {
        let at = instant() + secs(n);
        assert_eq!(
            ok(store
                .count_login_attempt(subjects.clone(), policy(), at)
                .await),
            None,
            "attempt {n}"
        );
    }
    let locked = ok(store
        .count_login_attempt(subjects.clone(), policy(), instant() + secs(4))
        .await);
    assert_eq!(
        locked,
        Some(instant() + secs(1) + policy().window),
        "until the window of the first attempt lapses"
    );
    let lapsed = instant() + secs(1) + policy().window;
    assert_eq!(
        ok(store
            .count_login_attempt(subjects.clone(), policy(), lapsed)
            .await),
        None,
        "a new window"
    );

    // A success: the account starts again, the address only gives back the
    // one attempt.
    ok(store
        .forgive_login_attempt(account.clone(), address.clone())
        .await);
    let later = lapsed + secs(1);
    for n in 0..3 {
        assert_eq!(
            ok(store
                .count_login_attempt(subjects.clone(), policy(), later)
                .await),
            None,
            "account attempt {n} after the success"
        );
    }
    for name in ["kai", "mei"] {
        let other_account = format!("account:{}", unique(name));
        assert!(
            ok(store
                .count_login_attempt(vec![other_account, address.clone()], policy(), later)
                .await)
            .is_none(),
            "the address's fourth and fifth attempts of its window"
        );
    }
    let past_address = ok(store
        .count_login_attempt(
            vec![format!("account:{}", unique("ren")), address],
            policy(),
            later,
        )
        .await);
    assert_eq!(past_address, Some(lapsed + policy().window));
}

pub async fn concurrent_login_attempts_judge_at_most_the_count(store: Arc<dyn Store>) {
    let subject = format!("account:{}", unique("hana"));
    let results = all_at_once(50, |_| {
        let store = Arc::clone(&store);
        let subjects = vec![subject.clone()];
        async move {
            store
                .count_login_attempt(subjects, policy(), instant())
                .await
        }
    })
    .await;
    let judged = results.into_iter().filter(|r| ok_ref(r).is_none()).count();
    assert_eq!(
        judged, 3,
        "of 50 attempts at once, exactly the policy's count"
    );
}

fn ok_ref<T: std::fmt::Debug>(result: &crate::StoreResult<T>) -> &T {
    result.as_ref().expect("the store answered")
}
