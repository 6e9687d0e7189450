//! Orders as the kitchen, the guest and the bill see them. Lines are priced
//! snapshots: a later catalog change never rewrites a placed order.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum OrderStatus {
    Placed,
    Accepted,
    Preparing,
    Ready,
    Served,
    Cancelled,
}

impl OrderStatus {
    pub const ALL: [OrderStatus; 6] = [
        OrderStatus::Placed,
        OrderStatus::Accepted,
        OrderStatus::Preparing,
        OrderStatus::Ready,
        OrderStatus::Served,
        OrderStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Placed => "placed",
            OrderStatus::Accepted => "accepted",
            OrderStatus::Preparing => "preparing",
            OrderStatus::Ready => "ready",
            OrderStatus::Served => "served",
            OrderStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<OrderStatus> {
        Self::ALL.into_iter().find(|status| status.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum OrderSource {
    Guest,
    Staff,
}

impl OrderSource {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderSource::Guest => "guest",
            OrderSource::Staff => "staff",
        }
    }

    pub fn parse(s: &str) -> Option<OrderSource> {
        [OrderSource::Guest, OrderSource::Staff]
            .into_iter()
            .find(|source| source.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LineTopping {
    pub topping_id: Uuid,
    pub name: String,
    pub price: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderLine {
    pub menu_item_id: Uuid,
    pub name: String,
    pub unit_price: i64,
    pub quantity: i64,
    pub toppings: Vec<LineTopping>,
    pub line_total: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    pub order_id: Uuid,
    pub shop_id: Uuid,
    pub session_id: Uuid,
    pub table_label: String,
    pub ticket_number: i64,
    pub status: OrderStatus,
    pub source: OrderSource,
    pub client_id: Option<String>,
    pub items: Vec<OrderLine>,
    pub note: String,
    pub total: i64,
    pub created_at: DateTime<Utc>,
    pub version: i64,
}

impl Order {
    pub fn counts_toward_bill(&self) -> bool {
        self.status != OrderStatus::Cancelled
    }
}
