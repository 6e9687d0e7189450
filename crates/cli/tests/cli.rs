//! The `ordergate` binary as an operator runs it: flags, environment, the
//! `listening on` line, SIGTERM, and the demo.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

const TOKEN: &str = "a-staff-token-of-some-length";

struct Running {
    child: Child,
    stdout: BufReader<ChildStdout>,
    /// Every stdout line read so far.
    printed: Vec<String>,
}

impl Running {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Running {
        Running::start_logging(
            args,
            &[&[("RUST_LOG", "warn")], env].concat(),
            Stdio::null(),
        )
    }

    /// [`Running::start`] with its log (stderr) going to `log`.
    fn start_logging(args: &[&str], env: &[(&str, &str)], log: impl Into<Stdio>) -> Running {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ordergate"))
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start ordergate");
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Running {
            child,
            stdout,
            printed: Vec::new(),
        }
    }

    /// Reads stdout up to the `listening on` line and returns the base URL.
    fn base_url(&mut self) -> String {
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(
                read > 0,
                "exited before listening; printed: {:?}",
                self.printed
            );
            let line = line.trim_end().to_owned();
            self.printed.push(line.clone());
            if let Some(base) = line.strip_prefix("listening on ") {
                return base.to_owned();
            }
        }
    }

    /// Sends SIGTERM and returns whether the process exited cleanly.
    fn terminate(mut self) -> bool {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        for _ in 0..100 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill().unwrap();
        false
    }
}

fn get(url: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    send(reqwest::Client::new().get(url), headers)
}

fn send(mut request: reqwest::RequestBuilder, headers: &[(&str, &str)]) -> (u16, Value) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    })
}

#[test]
fn serve_reads_flags_and_environment_and_stops_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("og.db").display());
    let mut server = Running::start(
        &["serve", "--listen", "127.0.0.1:0", "--database", &database],
        &[
            ("ORDERGATE_STAFF_TOKEN", "from-the-environment"),
            ("ORDERGATE_PUBLIC_URL", "https://diner.example"),
        ],
    );
    let base = server.base_url();
    assert_eq!(get(&format!("{base}/readyz"), &[]).0, 200);
    let (status, shops) = get(
        &format!("{base}/api/v1/shops"),
        &[("Authorization", "Bearer from-the-environment")],
    );
    assert_eq!((status, shops), (200, serde_json::json!({"shops": []})));
    assert!(
        server.terminate(),
        "SIGTERM must end the server with success"
    );
    assert!(
        dir.path().join("og.db").exists(),
        "the database file was created"
    );
}

#[test]
fn serve_refuses_an_unsupported_database_url() {
    let output = Command::new(env!("CARGO_BIN_EXE_ordergate"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database",
            "mysql://x/y",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unsupported database URL"), "{stderr}");
}

#[test]
fn a_short_or_empty_token_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("og.db");
    let database = format!("sqlite://{}", file.display());
    let serve = ["serve", "--listen", "127.0.0.1:0", "--database", &database];
    for (variable, token) in [
        ("ORDERGATE_STAFF_TOKEN", ""),
        ("ORDERGATE_STAFF_TOKEN", "fifteen-chars!!"),
        ("ORDERGATE_METRICS_TOKEN", "short"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_ordergate"))
            .args(serve)
            .env(variable, token)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{variable}={token:?} started");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("must be at least 16 characters long"),
            "{stderr}"
        );
        assert!(!file.exists(), "a refused start opened the database");
    }
    let demo = Command::new(env!("CARGO_BIN_EXE_ordergate"))
        .args(["demo", "--listen", "127.0.0.1:0", "--database", &database])
        .args(["--staff-token", "short"])
        .output()
        .unwrap();
    assert!(!demo.status.success());
    assert!(!file.exists(), "a refused demo created its database");
}

#[test]
fn demo_seeds_a_diner_and_starts_fresh_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("demo.db").display());
    for _ in 0..2 {
        let mut demo = Running::start(
            &["demo", "--listen", "127.0.0.1:0", "--database", &database],
            &[],
        );
        let base = demo.base_url();
        let export = demo
            .printed
            .iter()
            .find_map(|line| line.trim().strip_prefix("export "))
            .expect("an export line")
            .to_owned();
        let var = |name: &str| {
            export
                .split_whitespace()
                .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
                .unwrap()
                .to_owned()
        };
        assert_eq!(var("OG"), base);
        let tables = demo.printed.iter().filter(|l| l.contains("#pin=")).count();
        assert_eq!(tables, 3, "{:?}", demo.printed);

        let (status, menu) = get(&format!("{base}/api/v1/shops/{}/menu", var("SHOP")), &[]);
        assert_eq!(status, 200);
        let items = menu["items"].as_array().unwrap();
        assert!(items.len() >= 12, "a dozen items");
        assert_eq!(items.iter().filter(|i| i["soldOut"] == true).count(), 1);
        assert!(
            items.iter().any(|i| i["stock"].is_i64()),
            "some stock is tracked"
        );
        assert!(
            items
                .iter()
                .any(|i| !i["toppings"].as_array().unwrap().is_empty())
        );

        let session_url = format!("{base}/api/v1/sessions/{}", var("SESSION"));
        let (status, session) = get(&session_url, &[("X-Session-PIN", &var("PIN"))]);
        assert_eq!((status, session["status"].as_str()), (200, Some("active")));
        let (status, _) = get(
            &format!("{base}/api/v1/shops/{}/sessions", var("SHOP")),
            &[("Authorization", &format!("Bearer {}", var("TOKEN")))],
        );
        assert_eq!(status, 200);

        // Its staff sign in with the printed password, one account per
        // role; its pass display with the printed device link.
        let printed = |prefix: &str| {
            demo.printed
                .iter()
                .find_map(|line| line.trim().strip_prefix(prefix).map(str::to_owned))
                .unwrap_or_else(|| panic!("no {prefix:?} line in {:?}", demo.printed))
        };
        let sign_in = printed("sign in as");
        let password = sign_in
            .rsplit_once("(password ")
            .and_then(|(_, rest)| rest.strip_suffix(')'))
            .unwrap();
        let login = reqwest::Client::new()
            .post(format!("{base}/api/v1/auth/login"))
            .json(&serde_json::json!({"username": "floor", "password": password}));
        let (status, signed_in) = send(login, &[]);
        assert_eq!(status, 200, "{signed_in}");
        assert_eq!(signed_in["memberships"][0]["role"], "floor");
        let display = printed("pass display");
        let device_token = display
            .split_once("#device=")
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap();
        let bearer = format!("Bearer {device_token}");
        let (status, me) = get(
            &format!("{base}/api/v1/auth/me"),
            &[("Authorization", &bearer)],
        );
        assert_eq!((status, me["kind"].as_str()), (200, Some("device")));
        assert!(demo.terminate());
    }
}

#[test]
fn a_second_server_on_one_sqlite_file_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("og.db").display());
    let serve = ["serve", "--listen", "127.0.0.1:0", "--database", &database];
    let mut first = Running::start(&serve, &[("ORDERGATE_STAFF_TOKEN", TOKEN)]);
    let base = first.base_url();
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("Authorization", bearer.as_str())];
    let shop = serde_json::json!({"name": "Diner", "currency": "USD"});
    let create = reqwest::Client::new()
        .post(format!("{base}/api/v1/shops"))
        .json(&shop);
    assert_eq!(send(create, &auth).0, 201);

    for command in [
        &serve[..],
        &["demo", "--listen", "127.0.0.1:0", "--database", &database],
    ] {
        let second = Command::new(env!("CARGO_BIN_EXE_ordergate"))
            .args(command)
            .env("ORDERGATE_STAFF_TOKEN", TOKEN)
            .output()
            .unwrap();
        assert!(
            !second.status.success(),
            "{command:?} started beside a running server"
        );
        let stderr = String::from_utf8_lossy(&second.stderr);
        assert!(
            stderr.contains("in use by another ordergate server"),
            "{stderr}"
        );
    }
    let (status, shops) = get(&format!("{base}/api/v1/shops"), &auth);
    assert_eq!(
        (status, shops["shops"].as_array().map(Vec::len)),
        (200, Some(1)),
        "the first server still serves, its file untouched"
    );
    assert!(first.terminate());

    let mut after = Running::start(&serve, &[("ORDERGATE_STAFF_TOKEN", TOKEN)]);
    let base = after.base_url();
    assert_eq!(get(&format!("{base}/readyz"), &[]).0, 200);
    assert!(after.terminate());
}

#[test]
fn rush_refuses_a_server_that_already_has_shops() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("used.db").display());
    let serve = ["serve", "--listen", "127.0.0.1:0", "--database", &database];
    let mut server = Running::start(&serve, &[("ORDERGATE_STAFF_TOKEN", TOKEN)]);
    let base = server.base_url();
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("Authorization", bearer.as_str())];
    let shop = serde_json::json!({"name": "Somebody's Diner", "currency": "USD"});
    let create = reqwest::Client::new()
        .post(format!("{base}/api/v1/shops"))
        .json(&shop);
    assert_eq!(send(create, &auth).0, 201);

    let rush = Command::new(env!("CARGO_BIN_EXE_ordergate"))
        .args(["rush", "--url", &base, "--staff-token", TOKEN])
        .args(["--duration-secs", "1"])
        .output()
        .unwrap();
    assert!(!rush.status.success(), "rush ran against a used server");
    let stderr = String::from_utf8_lossy(&rush.stderr);
    assert!(
        stderr.contains("already has 1 shop:") && stderr.contains("--allow-existing"),
        "{stderr}"
    );
    let (status, shops) = get(&format!("{base}/api/v1/shops"), &auth);
    assert_eq!(
        (status, shops["shops"].as_array().map(Vec::len)),
        (200, Some(1)),
        "rush added nothing"
    );
    assert!(server.terminate());
}

/// The refusal a binary gives a database a newer release wrote, with the
/// database left as it was.
fn assert_refuses_a_newer_schema(database: &str) {
    let serve = Command::new(env!("CARGO_BIN_EXE_ordergate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--database", database])
        .env("ORDERGATE_STAFF_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(!serve.status.success(), "served a newer schema");
    let stderr = String::from_utf8_lossy(&serve.stderr);
    assert!(
        stderr.contains("newer than this ordergate") && stderr.contains("Upgrading"),
        "{stderr}"
    );
}

#[test]
fn an_older_binary_refuses_a_database_a_newer_one_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("og.db");
    let database = format!("sqlite://{}", file.display());
    // A database this binary made, then migrated by "a newer release".
    let serve = ["serve", "--listen", "127.0.0.1:0", "--database", &database];
    let mut first = Running::start(&serve, &[("ORDERGATE_STAFF_TOKEN", TOKEN)]);
    first.base_url();
    assert!(first.terminate());
    let newer = ordergate_store_sqlite::SCHEMA_VERSION as i64 + 1;
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.pragma_update(None, "user_version", newer).unwrap();
    drop(conn);
    assert_refuses_a_newer_schema(&database);
    let conn = rusqlite::Connection::open(&file).unwrap();
    let version: i64 = conn
        .query_row("pragma user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, newer, "the database was left as it was");

    // On PostgreSQL: a migration this binary does not have.
    let Ok(admin_url) = std::env::var("ORDERGATE_TEST_DATABASE_URL") else {
        eprintln!("the PostgreSQL half skipped: set ORDERGATE_TEST_DATABASE_URL");
        return;
    };
    let schema = format!("og_newer_{}", uuid::Uuid::new_v4().simple());
    let separator = if admin_url.contains('?') { '&' } else { '?' };
    let url = format!("{admin_url}{separator}options[search_path]={schema}");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let admin = |sql: String| {
        runtime.block_on(async {
            use sqlx::Connection;
            let mut conn = sqlx::PgConnection::connect(&admin_url).await.unwrap();
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                .execute(&mut conn)
                .await
                .unwrap();
        })
    };
    admin(format!("create schema {schema}"));
    let serve = ["serve", "--listen", "127.0.0.1:0", "--database", &url];
    let mut first = Running::start(&serve, &[("ORDERGATE_STAFF_TOKEN", TOKEN)]);
    first.base_url();
    assert!(first.terminate());
    admin(format!(
        "insert into {schema}._sqlx_migrations \
         (version, description, installed_on, success, checksum, execution_time) \
         values (99990101, 'from a newer release', now(), true, '\\x00', 1)"
    ));
    assert_refuses_a_newer_schema(&url);
    admin(format!("drop schema {schema} cascade"));
}

#[test]
fn json_logs_have_one_access_line_per_request_and_no_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("og.db").display());
    let log_path = dir.path().join("log.jsonl");
    let log = std::fs::File::create(&log_path).unwrap();
    let serve = [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--database",
        &database,
        "--log-format",
        "json",
    ];
    let mut server = Running::start_logging(
        &serve,
        &[("ORDERGATE_STAFF_TOKEN", TOKEN), ("RUST_LOG", "info")],
        log,
    );
    let base = server.base_url();
    let bearer = format!("Bearer {TOKEN}");
    let staff = [("Authorization", bearer.as_str())];
    let client = reqwest::Client::new;
    let shop = send(
        client()
            .post(format!("{base}/api/v1/shops"))
            .json(&serde_json::json!({"name": "Diner", "currency": "USD"})),
        &staff,
    )
    .1["shopId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, session) = send(
        client()
            .post(format!("{base}/api/v1/shops/{shop}/sessions"))
            .json(&serde_json::json!({"tableLabel": "T1"})),
        &staff,
    );
    let (session_id, pin) = (
        session["sessionId"].as_str().unwrap().to_owned(),
        session["pin"].as_str().unwrap().to_owned(),
    );
    let password = "a password nobody may read in a log";
    send(
        client()
            .post(format!("{base}/api/v1/shops/{shop}/staff"))
            .json(&serde_json::json!({"username": "kai", "password": password, "role": "owner"})),
        &staff,
    );
    let (_, signed_in) = send(
        client()
            .post(format!("{base}/api/v1/auth/login"))
            .json(&serde_json::json!({"username": "kai", "password": password})),
        &[],
    );
    let account_token = signed_in["token"].as_str().unwrap().to_owned();
    // Secrets in the query string, as event streams carry them.
    let (status, _) = get(
        &format!("{base}/api/v1/sessions/{session_id}?pin={pin}&access_token={account_token}"),
        &[],
    );
    assert_eq!(
        status, 401,
        "a query-string PIN is not how the session call takes it"
    );
    get(
        &format!("{base}/api/v1/sessions/{session_id}"),
        &[("X-Session-PIN", &pin)],
    );
    assert!(server.terminate());

    let text = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    let answered: Vec<&Value> = lines
        .iter()
        .filter(|l| l["message"] == "answered")
        .collect();
    assert_eq!(answered.len(), 6, "one access line per request: {text}");
    for line in &answered {
        for field in ["timestamp", "level", "status", "latency_ms"] {
            assert!(!line[field].is_null(), "{field} missing: {line}");
        }
        for field in ["method", "route", "request_id"] {
            assert!(
                line["span"][field].is_string(),
                "span.{field} missing: {line}"
            );
        }
        assert_eq!(line["span"]["client"], "127.0.0.1", "{line}");
    }
    let session_read = answered
        .iter()
        .find(|l| l["span"]["route"] == "/api/v1/sessions/{sessionId}" && l["status"] == 200)
        .expect("the session read");
    assert_eq!(session_read["span"]["session"], session_id.as_str());
    let seated = answered
        .iter()
        .find(|l| l["span"]["route"] == "/api/v1/shops/{shopId}/sessions")
        .expect("the seating");
    assert_eq!(seated["span"]["shop"], shop.as_str());
    for secret in [TOKEN, pin.as_str(), password, account_token.as_str()] {
        assert!(!text.contains(secret), "{secret:?} is in the log:\n{text}");
    }
}

/// The environment file the systemd unit reads, as systemd reads it: one
/// `NAME=value` a line, `#` comments.
fn environment_file(path: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (name, value) = line.split_once('=').expect("NAME=value");
            (name.to_owned(), value.to_owned())
        })
        .collect()
}

#[test]
fn the_packaged_environment_starts_the_server_once_a_token_is_set() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../packaging/ordergate.env");
    let settings = environment_file(example);
    let names: Vec<&str> = settings.iter().map(|(name, _)| name.as_str()).collect();
    for name in [
        "ORDERGATE_DATABASE_URL",
        "ORDERGATE_STAFF_TOKEN",
        "ORDERGATE_LOG_FORMAT",
    ] {
        assert!(names.contains(&name), "{name} is not in {example}");
    }
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../packaging/ordergate.service"
    ))
    .unwrap();
    for line in [
        "EnvironmentFile=/etc/ordergate/ordergate.env",
        "ExecStart=/usr/bin/ordergate serve",
        "StateDirectory=ordergate",
        "ProtectSystem=strict",
        "Restart=on-failure",
        "KillSignal=SIGTERM",
    ] {
        assert!(unit.lines().any(|l| l == line), "the unit lacks {line}");
    }

    // As shipped, the token is empty: the service refuses to start.
    let env_of = |overrides: &[(&str, &str)], dir: &std::path::Path| {
        let mut env: Vec<(String, String)> = settings.clone();
        for (name, value) in overrides {
            env.retain(|(n, _)| n != name);
            env.push(((*name).to_owned(), (*value).to_owned()));
        }
        // The state directory systemd would give it.
        let database = format!("sqlite://{}", dir.join("ordergate.db").display());
        env.retain(|(n, _)| n != "ORDERGATE_DATABASE_URL" && n != "ORDERGATE_LISTEN");
        env.push(("ORDERGATE_DATABASE_URL".into(), database));
        env.push(("ORDERGATE_LISTEN".into(), "127.0.0.1:0".into()));
        env
    };
    let dir = tempfile::tempdir().unwrap();
    let refused = Command::new(env!("CARGO_BIN_EXE_ordergate"))
        .arg("serve")
        .env_clear()
        .envs(env_of(&[], dir.path()))
        .output()
        .unwrap();
    assert!(!refused.status.success(), "started without a token");
    assert!(
        !dir.path().join("ordergate.db").exists(),
        "a refused start wrote a database"
    );

    // With one, it serves, logging JSON.
    let env = env_of(&[("ORDERGATE_STAFF_TOKEN", TOKEN)], dir.path());
    let env: Vec<(&str, &str)> = env.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    let mut server = Running::start_logging(&["serve"], &env, Stdio::null());
    let base = server.base_url();
    let bearer = format!("Bearer {TOKEN}");
    let create = reqwest::Client::new()
        .post(format!("{base}/api/v1/shops"))
        .json(&serde_json::json!({"name": "Diner", "currency": "USD"}));
    assert_eq!(send(create, &[("Authorization", &bearer)]).0, 201);
    let (status, shop) = get(
        &format!("{base}/api/v1/shops"),
        &[("Authorization", &bearer)],
    );
    assert_eq!(
        (status, shop["shops"][0]["name"].as_str()),
        (200, Some("Diner"))
    );
    assert!(
        server.terminate(),
        "a clean stop on SIGTERM, as the unit's KillSignal sends"
    );
}
