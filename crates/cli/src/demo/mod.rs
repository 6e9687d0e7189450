//! `ordergate demo`: the server on a fresh SQLite file with a seeded diner,
//! so a newcomer can try every endpoint from a terminal in a minute.

mod menu;

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;

use anyhow::{Context, bail};
use clap::Args;
use ordergate_domain::catalog::{Catalog, CatalogInput};
use ordergate_domain::inventory::InventoryUpdate;
use ordergate_domain::session::{Session, SessionStatus, generate_pin};
use ordergate_domain::shop::{NewShop, Shop};
use ordergate_domain::staff::{Account, Device, Role, generate_device_token, staff_token_digest};
use ordergate_server::accounts::hash_password;
use ordergate_server::{Settings, open_store, serve};
use ordergate_store::Store;
use tokio::net::TcpListener;
use uuid::Uuid;

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Address to accept connections on.
    #[arg(long, env = "ORDERGATE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Demo database; deleted and re-seeded on every start.
    #[arg(long, default_value = "sqlite://ordergate-demo.db")]
    pub database: String,

    /// Staff token [default: a fresh random one, printed at start].
    #[arg(long, env = "ORDERGATE_STAFF_TOKEN", hide_env_values = true)]
    pub staff_token: Option<String>,

    /// Base URL guests reach this server at [default: http://<listen>].
    #[arg(long, env = "ORDERGATE_PUBLIC_URL")]
    pub public_url: Option<String>,
}

/// What the demo seeded, for printing.
struct Seeded {
    shop_id: Uuid,
    tables: Vec<Session>,
    /// The password of the demo's accounts (one per role).
    password: String,
    /// The kitchen display's device token.
    display_token: String,
}

/// The demo's staff, one account per role, all with the printed password.
const DEMO_STAFF: [(&str, Role); 4] = [
    ("owner", Role::Owner),
    ("manager", Role::Manager),
    ("floor", Role::Floor),
    ("kitchen", Role::Kitchen),
];

pub async fn run(
    args: DemoArgs,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let Some(path) = ordergate_store_sqlite::path_from_url(&args.database) else {
        bail!("the demo runs on SQLite: give --database sqlite://FILE");
    };
    let token = args
        .staff_token
        .clone()
        .unwrap_or_else(|| Uuid::new_v4().simple().to_string());
    let mut settings = Settings::new(args.database.clone());
    settings.listen = args.listen;
    settings.staff_token = Some(token.clone());
    settings.public_url = args.public_url;
    // Before the reset: a refused start wipes nothing.
    settings.check()?;
    {
        // Never wipe a file another server is running on.
        let _serving = ordergate_store_sqlite::ServingLock::take(&path)?;
        reset(&path)?;
    }
    let store = open_store(&settings).await?;
    let seeded = seed(store.as_ref()).await?;
    let listener = TcpListener::bind(args.listen).await.with_context(|| {
        format!(
            "cannot listen on {} (try --listen 127.0.0.1:0)",
            args.listen
        )
    })?;
    let base = settings.public_url(listener.local_addr()?);
    print_welcome(&path, &base, &token, &seeded);
    serve(settings, store, listener, shutdown).await
}

/// Every demo starts from the same seeded state: yesterday's demo orders and
/// checked-out tables would make the printed tour wrong.
fn reset(path: &Path) -> anyhow::Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot reset {}", path.display())),
        }
    }
    Ok(())
}

async fn seed(store: &dyn Store) -> anyhow::Result<Seeded> {
    let now = ordergate_domain::now();
    let shop = NewShop {
        name: "Route 66 Diner".into(),
        currency: "USD".into(),
        timezone: Some("America/Chicago".into()),
        // Its menu in English, and in Japanese for the tourists.
        languages: Some(vec!["en".into(), "ja".into()]),
    }
    .validate(Uuid::new_v4(), now)?;
    let shop = store.create_shop(shop).await?;

    let topping_ids: [Uuid; 5] = std::array::from_fn(|_| Uuid::new_v4());
    let menu = CatalogInput {
        toppings: menu::toppings(topping_ids),
        items: menu::items(topping_ids),
    };
    let catalog = store.put_catalog(shop.shop_id, menu, None, now).await?;
    let [_, bacon, _, _, avocado] = topping_ids;
    track_stock(store, &shop, &catalog, bacon, avocado).await?;
    let tables = open_tables(store, shop.shop_id).await?;
    let password = add_staff(store, shop.shop_id).await?;
    let display_token = generate_device_token();
    let display = Device {
        device_id: Uuid::new_v4(),
        shop_id: shop.shop_id,
        name: "Pass display".into(),
        role: Role::Kitchen,
        created_at: ordergate_domain::now(),
    };
    store
        .create_device(display, staff_token_digest(&display_token))
        .await?;
    Ok(Seeded {
        shop_id: shop.shop_id,
        tables,
        password,
        display_token,
    })
}

/// Tracks the stock of a few items and toppings, one of them at zero: the
/// README's tour shows stock counting down and an item sold out.
async fn track_stock(
    store: &dyn Store,
    shop: &Shop,
    catalog: &Catalog,
    bacon: Uuid,
    avocado: Uuid,
) -> anyhow::Result<()> {
    let shop_id = shop.shop_id;
    let id_of = |name: &str| {
        catalog
            .items
            .iter()
            .find(|i| i.name.in_default(&shop.languages) == name)
            .map(|i| i.menu_item_id)
            .context("seeded item missing")
    };
    let tracked = [
        (id_of("Apple Pie")?, 8),
        (id_of("Chocolate Sundae")?, 0),
        (id_of("Craft Beer")?, 24),
        (id_of("Caesar Salad")?, 12),
        (bacon, 30),
        (avocado, 10),
    ];
    for (item_id, stock) in tracked {
        let now = ordergate_domain::now();
        let change = InventoryUpdate {
            stock: Some(Some(stock)),
            sold_out: None,
            sold_out_until: None,
        }
        .validate(now)?;
        store
            .update_inventory(shop_id, item_id, change, "demo", now)
            .await?;
    }
    Ok(())
}

/// One account per role, sharing a fresh password (printed at start):
/// signing in as each shows what that role sees.
async fn add_staff(store: &dyn Store, shop_id: Uuid) -> anyhow::Result<String> {
    let password = format!("demo-{}", &Uuid::new_v4().simple().to_string()[..12]);
    let hash = hash_password(password.clone())
        .await
        .map_err(|_| anyhow::anyhow!("cannot hash the demo password"))?;
    for (username, role) in DEMO_STAFF {
        let now = ordergate_domain::now();
        let account = Account {
            account_id: Uuid::new_v4(),
            username: username.into(),
            password_hash: hash.clone(),
            created_at: now,
        };
        store
            .add_member(shop_id, username.into(), Some(account), role, now)
            .await?;
    }
    Ok(password)
}

async fn open_tables(store: &dyn Store, shop_id: Uuid) -> anyhow::Result<Vec<Session>> {
    let mut tables = Vec::new();
    for label in ["T1", "T2", "T3"] {
        let now = ordergate_domain::now();
        let session = Session {
            session_id: Uuid::new_v4(),
            shop_id,
            table_label: label.into(),
            pin: generate_pin(),
            status: SessionStatus::Active,
            opened_at: now,
            closed_at: None,
            pin_failures: 0,
            pin_locked_until: None,
        };
        tables.push(store.open_session(session).await?);
    }
    Ok(tables)
}

fn print_welcome(path: &Path, base: &str, token: &str, seeded: &Seeded) {
    let shop = seeded.shop_id;
    println!("ordergate demo: Route 66 Diner");
    println!(
        "  database      {} (reset and re-seeded on every start)",
        path.display()
    );
    println!("  staff token   {token}");
    println!("  shop          {shop}");
    println!("  start page    {base}/   (sign in: your shops)");
    println!("  kitchen       {base}/kitchen/{shop}");
    println!("  staff         {base}/staff/{shop}");
    println!(
        "  sign in as    {} (password {})",
        DEMO_STAFF.map(|(name, _)| name).join(", "),
        seeded.password
    );
    println!(
        "  pass display  {base}/kitchen/{shop}#device={}   (a kitchen device, signed in)",
        seeded.display_token
    );
    println!("  guest menu    {base}/api/v1/shops/{shop}/menu");
    println!("  live events   {base}/api/v1/shops/{shop}/events?access_token={token}");
    println!("  tables (guest page, as in the QR code, and PIN):");
    for table in &seeded.tables {
        println!(
            "    {}  {base}/t/{}#pin={}   PIN {}",
            table.table_label, table.session_id, table.pin, table.pin
        );
    }
    let first = &seeded.tables[0];
    println!();
    println!("  for the README's curl tour, paste into another terminal:");
    println!(
        "  export OG={base} TOKEN={token} SHOP={shop} SESSION={} PIN={}",
        first.session_id, first.pin
    );
    println!();
}
