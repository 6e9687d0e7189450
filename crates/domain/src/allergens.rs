//! The allergens an item may declare: a fixed list of codes covering the
//! 14 the EU requires to be declared (Regulation 1169/2011, Annex II) and
//! the 28 Japan labels (8 mandatory and 20 recommended, Consumer Affairs
//! Agency, as revised in 2024). Where the two name the same food (egg,
//! milk, peanut, sesame, soy), one code serves both. Clients translate the
//! codes; the list is in docs/api.md.

/// Every allergen code, EU's first, then Japan's that the EU's do not name.
pub const ALLERGENS: [&str; 37] = [
    // EU Annex II
    "gluten",
    "crustaceans",
    "egg",
    "fish",
    "peanut",
    "soy",
    "milk",
    "tree_nuts",
    "celery",
    "mustard",
    "sesame",
    "sulphites",
    "lupin",
    "molluscs",
    // Japan, mandatory (besides egg, milk, peanut)
    "wheat",
    "buckwheat",
    "shrimp",
    "crab",
    "walnut",
    // Japan, recommended (besides sesame, soy)
    "almond",
    "abalone",
    "squid",
    "salmon_roe",
    "orange",
    "cashew",
    "kiwi",
    "beef",
    "salmon",
    "mackerel",
    "chicken",
    "banana",
    "pork",
    "macadamia",
    "peach",
    "yam",
    "apple",
    "gelatin",
];

pub fn is_allergen(code: &str) -> bool {
    ALLERGENS.contains(&code)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn the_list_covers_the_eus_14_and_japans_28_once_each() {
        let codes: HashSet<&str> = ALLERGENS.into_iter().collect();
        assert_eq!(codes.len(), ALLERGENS.len(), "no code twice");
        let japan = [
            "egg",
            "milk",
            "wheat",
            "buckwheat",
            "peanut",
            "shrimp",
            "crab",
            "walnut",
            "almond",
            "abalone",
            "squid",
            "salmon_roe",
            "orange",
            "cashew",
            "kiwi",
            "beef",
            "sesame",
            "salmon",
            "mackerel",
            "soy",
            "chicken",
            "banana",
            "pork",
            "macadamia",
            "peach",
            "yam",
            "apple",
            "gelatin",
        ];
        assert_eq!(japan.len(), 28);
        assert!(japan.iter().all(|code| is_allergen(code)));
        assert!(ALLERGENS[..14].iter().all(|code| is_allergen(code)));
        assert!(!is_allergen("Peanut") && !is_allergen("nuts"));
    }
}
