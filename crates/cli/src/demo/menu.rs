//! The demo diner's menu: English and Japanese texts, allergens, dietary
//! tags, kitchen stations, a doneness to choose for the cheeseburger and a
//! size for the milkshake.

use std::collections::BTreeMap;

use ordergate_domain::catalog::{MenuItemInput, OptionGroupInput, OptionInput, ToppingInput};
use ordergate_domain::language::Text;
use uuid::Uuid;

/// A text in English and Japanese.
fn both(en: &str, ja: &str) -> Text {
    if en.is_empty() {
        return Text::default();
    }
    Text::Localized(BTreeMap::from([
        ("en".to_owned(), en.to_owned()),
        ("ja".to_owned(), ja.to_owned()),
    ]))
}

pub(super) fn toppings([cheese, bacon, egg, jalapenos, avocado]: [Uuid; 5]) -> Vec<ToppingInput> {
    [
        (cheese, "Extra cheese", "チーズ増量", 150),
        (bacon, "Bacon", "ベーコン", 200),
        (egg, "Fried egg", "目玉焼き", 120),
        (jalapenos, "Jalapeños", "ハラペーニョ", 80),
        (avocado, "Avocado", "アボカド", 180),
    ]
    .into_iter()
    .map(|(id, en, ja, price)| ToppingInput {
        topping_id: Some(id),
        name: both(en, ja),
        price,
    })
    .collect()
}

/// One line of the menu board.
struct Dish {
    category: (&'static str, &'static str),
    name: (&'static str, &'static str),
    description: (&'static str, &'static str),
    price: i64,
    allergens: &'static [&'static str],
    tags: &'static [&'static str],
    station: &'static str,
}

impl Dish {
    fn input(self, toppings: &[Uuid], max: i64) -> MenuItemInput {
        MenuItemInput {
            menu_item_id: None,
            name: both(self.name.0, self.name.1),
            description: both(self.description.0, self.description.1),
            category: both(self.category.0, self.category.1),
            price: self.price,
            topping_ids: toppings.to_vec(),
            max_toppings: Some(max),
            allergens: self.allergens.iter().map(|&a| a.to_owned()).collect(),
            tags: self.tags.iter().map(|&t| t.to_owned()).collect(),
            station: Some(self.station.to_owned()),
            option_groups: vec![],
            image_id: None,
        }
    }
}

/// A group of choices, each option in both languages with its extra price.
fn group(
    name: (&str, &str),
    min: i64,
    max: i64,
    options: &[(&str, &str, i64)],
) -> OptionGroupInput {
    OptionGroupInput {
        group_id: None,
        name: both(name.0, name.1),
        min_choices: min,
        max_choices: Some(max),
        options: options
            .iter()
            .map(|&(en, ja, price)| OptionInput {
                option_id: None,
                name: both(en, ja),
                price,
            })
            .collect(),
    }
}

const BURGERS: (&str, &str) = ("Burgers", "バーガー");
const MAINS: (&str, &str) = ("Mains", "メイン");
const SIDES: (&str, &str) = ("Sides", "サイド");
const DESSERTS: (&str, &str) = ("Desserts", "デザート");
const DRINKS: (&str, &str) = ("Drinks", "ドリンク");

pub(super) fn items([cheese, bacon, egg, jalapenos, avocado]: [Uuid; 5]) -> Vec<MenuItemInput> {
    let dish = |category, name, description, price, allergens, tags, station| Dish {
        category,
        name,
        description,
        price,
        allergens,
        tags,
        station,
    };
    let mut cheeseburger = dish(
        BURGERS,
        ("Classic Cheeseburger", "クラシック・チーズバーガー"),
        (
            "Quarter pound, cheddar, pickles",
            "ビーフ113g、チェダー、ピクルス",
        ),
        1290,
        &["wheat", "milk", "egg", "beef", "sesame"],
        &[],
        "grill",
    )
    .input(&[cheese, bacon, egg, jalapenos, avocado], 3);
    cheeseburger.option_groups = vec![group(
        ("Doneness", "焼き加減"),
        1,
        1,
        &[
            ("Medium rare", "ミディアムレア", 0),
            ("Medium", "ミディアム", 0),
            ("Well done", "ウェルダン", 0),
        ],
    )];
    let mut milkshake = dish(
        DRINKS,
        ("Vanilla Milkshake", "バニラシェイク"),
        ("", ""),
        550,
        &["milk"],
        &["vegetarian"],
        "bar",
    )
    .input(&[], 0);
    milkshake.option_groups = vec![group(
        ("Size", "サイズ"),
        1,
        1,
        &[("Regular", "レギュラー", 0), ("Large", "ラージ", 150)],
    )];
    vec![
        cheeseburger,
        dish(
            BURGERS,
            ("Veggie Burger", "ベジバーガー"),
            (
                "Black bean patty, chipotle mayo",
                "黒豆パティ、チポトレマヨ",
            ),
            1190,
            &["wheat", "soy", "egg", "sesame"],
            &["vegetarian"],
            "grill",
        )
        .input(&[cheese, egg, jalapenos, avocado], 3),
        dish(
            MAINS,
            ("Chicken Katsu Curry", "チキンカツカレー"),
            (
                "Crispy cutlet, mild curry, rice",
                "サクサクのカツ、甘口カレー、ライス",
            ),
            1350,
            &["wheat", "egg", "milk", "chicken", "soy"],
            &[],
            "kitchen",
        )
        .input(&[cheese, egg], 2),
        dish(
            MAINS,
            ("Fish & Chips", "フィッシュ&チップス"),
            (
                "Beer-battered cod, tartare sauce",
                "ビール衣のタラ、タルタルソース",
            ),
            1400,
            &["fish", "wheat", "egg"],
            &[],
            "fryer",
        )
        .input(&[], 0),
        dish(
            MAINS,
            ("Club Sandwich", "クラブサンドイッチ"),
            (
                "Turkey, lettuce, tomato, toasted",
                "ターキー、レタス、トマト、トースト",
            ),
            1100,
            &["wheat", "egg"],
            &[],
            "kitchen",
        )
        .input(&[bacon, avocado, egg], 2),
        dish(
            SIDES,
            ("Fries", "フライドポテト"),
            ("Skin-on, sea salt", "皮付き、海塩"),
            450,
            &[],
            &["vegan"],
            "fryer",
        )
        .input(&[cheese], 1),
        dish(
            SIDES,
            ("Onion Rings", "オニオンリング"),
            ("", ""),
            500,
            &["wheat"],
            &["vegan"],
            "fryer",
        )
        .input(&[], 0),
        dish(
            SIDES,
            ("Caesar Salad", "シーザーサラダ"),
            (
                "Romaine, parmesan, croutons",
                "ロメイン、パルメザン、クルトン",
            ),
            750,
            &["wheat", "milk", "egg", "fish"],
            &[],
            "kitchen",
        )
        .input(&[bacon, egg, avocado], 2),
        dish(
            DESSERTS,
            ("Apple Pie", "アップルパイ"),
            ("Warm, with vanilla ice cream", "温かいパイにバニラアイス"),
            600,
            &["wheat", "milk", "egg", "apple"],
            &["vegetarian"],
            "dessert",
        )
        .input(&[], 0),
        dish(
            DESSERTS,
            ("Chocolate Sundae", "チョコレートサンデー"),
            ("", ""),
            650,
            &["milk", "peanut"],
            &["vegetarian"],
            "dessert",
        )
        .input(&[], 0),
        milkshake,
        dish(
            DRINKS,
            ("Cola", "コーラ"),
            ("", ""),
            300,
            &[],
            &["vegan"],
            "bar",
        )
        .input(&[], 0),
        dish(
            DRINKS,
            ("Coffee", "コーヒー"),
            ("Bottomless", "おかわり自由"),
            350,
            &[],
            &["vegan"],
            "bar",
        )
        .input(&[], 0),
        dish(
            DRINKS,
            ("Craft Beer", "クラフトビール"),
            ("Local IPA, 16 oz", "地元のIPA、473ml"),
            700,
            &["wheat"],
            &["vegan"],
            "bar",
        )
        .input(&[], 0),
    ]
}
