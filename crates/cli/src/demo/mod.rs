//! `ordergate demo`: the server on a fresh SQLite file with a seeded diner,
//! so a newcomer can try every endpoint from a terminal in a minute.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;

use anyhow::{Context, bail};
use clap::Args;
use ordergate_domain::catalog::{Catalog, CatalogInput, MenuItemInput, ToppingInput};
use ordergate_domain::inventory::InventoryUpdate;
use ordergate_domain::language::Text;
use ordergate_domain::session::{Session, SessionStatus, generate_pin};
use ordergate_domain::shop::NewShop;
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
}

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
        languages: None,
    }
    .validate(Uuid::new_v4(), now)?;
    let shop = store.create_shop(shop).await?;

    let topping_ids: [Uuid; 5] = std::array::from_fn(|_| Uuid::new_v4());
    let menu = CatalogInput {
        toppings: toppings(topping_ids),
        items: items(topping_ids),
    };
    let catalog = store.put_catalog(shop.shop_id, menu, None, now).await?;
    let [_, bacon, _, _, avocado] = topping_ids;
    track_stock(store, shop.shop_id, &catalog, bacon, avocado).await?;
    let tables = open_tables(store, shop.shop_id).await?;
    Ok(Seeded {
        shop_id: shop.shop_id,
        tables,
    })
}

fn toppings([cheese, bacon, egg, jalapenos, avocado]: [Uuid; 5]) -> Vec<ToppingInput> {
    [
        (cheese, "Extra cheese", 150),
        (bacon, "Bacon", 200),
        (egg, "Fried egg", 120),
        (jalapenos, "Jalapeños", 80),
        (avocado, "Avocado", 180),
    ]
    .into_iter()
    .map(|(id, name, price)| ToppingInput {
        topping_id: Some(id),
        name: name.into(),
        price,
    })
    .collect()
}

fn item(
    category: &str,
    name: &str,
    description: &str,
    price: i64,
    toppings: &[Uuid],
    max: i64,
) -> MenuItemInput {
    MenuItemInput {
        menu_item_id: None,
        name: name.into(),
        description: description.into(),
        category: category.into(),
        price,
        topping_ids: toppings.to_vec(),
        max_toppings: Some(max),
        allergens: vec![],
        tags: vec![],
        station: None,
        option_groups: vec![],
        image_id: None,
    }
}

fn items([cheese, bacon, egg, jalapenos, avocado]: [Uuid; 5]) -> Vec<MenuItemInput> {
    vec![
        item(
            "Burgers",
            "Classic Cheeseburger",
            "Quarter pound, cheddar, pickles",
            1290,
            &[cheese, bacon, egg, jalapenos, avocado],
            3,
        ),
        item(
            "Burgers",
            "Veggie Burger",
            "Black bean patty, chipotle mayo",
            1190,
            &[cheese, egg, jalapenos, avocado],
            3,
        ),
        item(
            "Mains",
            "Chicken Katsu Curry",
            "Crispy cutlet, mild curry, rice",
            1350,
            &[cheese, egg],
            2,
        ),
        item(
            "Mains",
            "Fish & Chips",
            "Beer-battered cod, tartare sauce",
            1400,
            &[],
            0,
        ),
        item(
            "Mains",
            "Club Sandwich",
            "Turkey, lettuce, tomato, toasted",
            1100,
            &[bacon, avocado, egg],
            2,
        ),
        item("Sides", "Fries", "Skin-on, sea salt", 450, &[cheese], 1),
        item("Sides", "Onion Rings", "", 500, &[], 0),
        item(
            "Sides",
            "Caesar Salad",
            "Romaine, parmesan, croutons",
            750,
            &[bacon, egg, avocado],
            2,
        ),
        item(
            "Desserts",
            "Apple Pie",
            "Warm, with vanilla ice cream",
            600,
            &[],
            0,
        ),
        item("Desserts", "Chocolate Sundae", "", 650, &[], 0),
        item("Drinks", "Vanilla Milkshake", "", 550, &[], 0),
        item("Drinks", "Cola", "", 300, &[], 0),
        item("Drinks", "Coffee", "Bottomless", 350, &[], 0),
        item("Drinks", "Craft Beer", "Local IPA, 16 oz", 700, &[], 0),
    ]
}

/// Tracks the stock of a few items and toppings, one of them at zero: the
/// README's tour shows stock counting down and an item sold out.
async fn track_stock(
    store: &dyn Store,
    shop_id: Uuid,
    catalog: &Catalog,
    bacon: Uuid,
    avocado: Uuid,
) -> anyhow::Result<()> {
    let id_of = |name: &str| {
        catalog
            .items
            .iter()
            .find(|i| i.name == Text::from(name))
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
    println!("  kitchen       {base}/kitchen/{shop}");
    println!("  staff         {base}/staff/{shop}   (asks for the staff token)");
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
