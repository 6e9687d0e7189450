//! Server settings: every flag also readable from the environment.

use std::net::{IpAddr, SocketAddr};

use chrono::Duration;
use clap::Args;
use ordergate_domain::order::admission::OrderRules;
use ordergate_domain::order::{Recall, RecallRequest};
use ordergate_domain::session::PinPolicy;
use ordergate_domain::staff::LoginPolicy;

#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// Address to accept connections on.
    #[arg(long, env = "ORDERGATE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// `sqlite://FILE` (created if missing) or `postgres://…`.
    #[arg(
        long,
        env = "ORDERGATE_DATABASE_URL",
        default_value = "sqlite://ordergate.db"
    )]
    pub database: String,

    /// Bearer token for staff endpoints (at least 16 characters); without one, staff endpoints refuse every request.
    #[arg(long, env = "ORDERGATE_STAFF_TOKEN", hide_env_values = true)]
    pub staff_token: Option<String>,

    /// Bearer token that may read /metrics besides the staff token (at least 16 characters).
    #[arg(long, env = "ORDERGATE_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,

    /// Serve /metrics to anyone, without a token.
    #[arg(long, env = "ORDERGATE_METRICS_PUBLIC")]
    pub metrics_public: bool,

    /// Base URL guests reach this server at, for QR links [default: http://<listen>].
    #[arg(long, env = "ORDERGATE_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Window in which the same client's identical order is refused as a duplicate (0: off).
    #[arg(long, env = "ORDERGATE_DUPLICATE_WINDOW_SECS", default_value_t = 30)]
    pub duplicate_window_secs: u32,

    /// Minimum time between two accepted orders of one client (0: off).
    #[arg(long, env = "ORDERGATE_CLIENT_COOLDOWN_MS", default_value_t = 2000)]
    pub client_cooldown_ms: u32,

    /// How long a completed idempotency key is remembered.
    #[arg(long, env = "ORDERGATE_IDEMPOTENCY_TTL_SECS", default_value_t = 86400,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub idempotency_ttl_secs: u32,

    /// How long a request waits for an in-flight request with the same key.
    #[arg(long, env = "ORDERGATE_INFLIGHT_WAIT_MS", default_value_t = 2000)]
    pub inflight_wait_ms: u32,

    /// Consecutive wrong PINs that lock a session.
    #[arg(long, env = "ORDERGATE_PIN_MAX_FAILURES", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub pin_max_failures: u32,

    /// How long a locked PIN stays locked.
    #[arg(long, env = "ORDERGATE_PIN_LOCKOUT_SECS", default_value_t = 300,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub pin_lockout_secs: u32,

    /// Sign-in attempts one username may make per 15 minutes, right or wrong.
    #[arg(long, env = "ORDERGATE_LOGIN_MAX_FAILURES", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub login_max_failures: u32,

    /// Failed sign-ins one client address may make per 15 minutes, whatever
    /// the usernames.
    #[arg(long, env = "ORDERGATE_LOGIN_MAX_ADDRESS_FAILURES", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub login_max_address_failures: u32,

    /// Accepted guest orders one session may place per 10 minutes, whatever the device (0: off).
    #[arg(long, env = "ORDERGATE_SESSION_ORDER_LIMIT", default_value_t = 60)]
    pub session_order_limit: u32,

    /// How long after checkout guests may still read their session and replay old keys.
    #[arg(
        long,
        env = "ORDERGATE_CLOSED_SESSION_GRACE_SECS",
        default_value_t = 1800
    )]
    pub closed_session_grace_secs: u32,

    /// How long after a kitchen move a recall may still undo it.
    #[arg(long, env = "ORDERGATE_RECALL_WINDOW_SECS", default_value_t = 300,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub recall_window_secs: u32,

    /// Audit rows older than this are purged.
    #[arg(long, env = "ORDERGATE_AUDIT_RETENTION_DAYS", default_value_t = 90,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub audit_retention_days: u32,

    /// Longest a request may take to arrive and be answered (event streams excepted).
    #[arg(long, env = "ORDERGATE_REQUEST_TIMEOUT_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub request_timeout_secs: u32,

    /// Reverse proxies whose X-Forwarded-For names the client (comma-separated addresses).
    #[arg(
        long = "trusted-proxy",
        env = "ORDERGATE_TRUSTED_PROXIES",
        value_delimiter = ','
    )]
    pub trusted_proxies: Vec<IpAddr>,
}

/// Shortest token the server accepts: anything shorter is guessable, and an
/// empty one would let an empty credential in.
pub const MIN_TOKEN_CHARS: usize = 16;

impl Settings {
    /// Settings with every default, for embedding and tests.
    pub fn new(database: impl Into<String>) -> Settings {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            database: database.into(),
            staff_token: None,
            metrics_token: None,
            metrics_public: false,
            public_url: None,
            duplicate_window_secs: 30,
            client_cooldown_ms: 2000,
            idempotency_ttl_secs: 86400,
            inflight_wait_ms: 2000,
            pin_max_failures: 5,
            pin_lockout_secs: 300,
            login_max_failures: 5,
            login_max_address_failures: 50,
            session_order_limit: 60,
            closed_session_grace_secs: 1800,
            recall_window_secs: 300,
            audit_retention_days: 90,
            request_timeout_secs: 30,
            trusted_proxies: Vec::new(),
        }
    }

    /// Refuses settings the server must not start with.
    pub fn check(&self) -> anyhow::Result<()> {
        for (flag, token) in [
            ("--staff-token (ORDERGATE_STAFF_TOKEN)", &self.staff_token),
            (
                "--metrics-token (ORDERGATE_METRICS_TOKEN)",
                &self.metrics_token,
            ),
        ] {
            if let Some(token) = token
                && token.chars().count() < MIN_TOKEN_CHARS
            {
                anyhow::bail!(
                    "{flag} must be at least {MIN_TOKEN_CHARS} characters long (it has {}); \
                     generate one with `openssl rand -hex 16`, or leave it unset",
                    token.chars().count()
                );
            }
        }
        Ok(())
    }

    pub fn pin_policy(&self) -> PinPolicy {
        PinPolicy {
            max_failures: self.pin_max_failures,
            lockout: Duration::seconds(i64::from(self.pin_lockout_secs)),
            closed_grace: Duration::seconds(i64::from(self.closed_session_grace_secs)),
        }
    }

    pub fn login_policy(&self) -> LoginPolicy {
        LoginPolicy {
            max_account_failures: i64::from(self.login_max_failures),
            max_address_failures: i64::from(self.login_max_address_failures),
            ..LoginPolicy::default()
        }
    }

    /// A recall of `request`, judged against the server's window.
    pub fn recall(&self, request: &RecallRequest) -> Recall {
        Recall {
            expected_version: request.expected_version,
            window: Duration::seconds(i64::from(self.recall_window_secs)),
        }
    }

    /// The admission rules of an order that gives up waiting for its table
    /// at `busy_deadline`.
    pub fn order_rules(&self, busy_deadline: std::time::Instant) -> OrderRules {
        OrderRules {
            pin_policy: self.pin_policy(),
            duplicate_window: Duration::seconds(i64::from(self.duplicate_window_secs)),
            cooldown: Duration::milliseconds(i64::from(self.client_cooldown_ms)),
            session_order_limit: self.session_order_limit,
            busy_deadline,
        }
    }

    /// When a key completed now may be forgotten.
    pub fn idempotency_expiry(
        &self,
        now: ordergate_domain::Timestamp,
    ) -> ordergate_domain::Timestamp {
        now + Duration::seconds(i64::from(self.idempotency_ttl_secs))
    }

    /// Audit rows recorded before this are purged.
    pub fn audit_cutoff(&self, now: ordergate_domain::Timestamp) -> ordergate_domain::Timestamp {
        now - Duration::days(i64::from(self.audit_retention_days))
    }

    pub fn request_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(u64::from(self.request_timeout_secs))
    }

    pub fn inflight_wait(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.inflight_wait_ms))
    }

    /// The configured public URL without a trailing slash, or one built from
    /// the address actually bound (which differs from `listen` on port 0).
    pub fn public_url(&self, bound: SocketAddr) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{bound}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        settings: Settings,
    }

    #[test]
    fn defaults_match_the_documented_table() {
        let parsed = Cli::parse_from(["ordergate"]).settings;
        let documented = Settings::new("sqlite://ordergate.db");
        assert_eq!(format!("{parsed:?}"), format!("{documented:?}"));
    }

    #[test]
    fn public_url_defaults_to_the_bound_address() {
        let mut settings = Settings::new("sqlite://x.db");
        let bound = SocketAddr::from(([127, 0, 0, 1], 4321));
        assert_eq!(settings.public_url(bound), "http://127.0.0.1:4321");
        settings.public_url = Some("https://order.example.com/".into());
        assert_eq!(settings.public_url(bound), "https://order.example.com");
    }
}
