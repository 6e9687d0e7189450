//! Languages: the ones a shop serves its menu in, the catalog's texts in
//! each, and which one a guest is shown. A party at one table may read
//! Japanese and English; the kitchen reads the shop's first language.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use unic_langid::LanguageIdentifier;

use crate::validation::FieldErrors;

/// Languages one text may be given in.
pub const MAX_TEXT_LANGUAGES: usize = 16;
/// Languages a shop may serve its menu in.
pub const MAX_SHOP_LANGUAGES: usize = 16;

/// A BCP 47 language tag, as a Unicode language identifier (language,
/// script, region, variants), in canonical case: `ja`, `en-US`, `zh-Hant`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Language(String);

impl Language {
    /// `None` for anything that is not a language tag with an ISO 639
    /// language of two or three letters (`und`, the undetermined language,
    /// is refused too: a menu text is in some language).
    pub fn parse(tag: &str) -> Option<Language> {
        let id: LanguageIdentifier = tag.parse().ok()?;
        let language = id.language.as_str();
        (!id.language.is_empty() && language.len() <= 3).then(|| Language(id.to_string()))
    }

    pub fn english() -> Language {
        Language("en".to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The language subtag alone: `zh` of `zh-Hant-TW`.
    fn primary(&self) -> &str {
        self.0.split('-').next().unwrap_or_default()
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Language {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tag = String::deserialize(deserializer)?;
        Language::parse(&tag)
            .ok_or_else(|| serde::de::Error::custom(format!("{tag:?} is not a language tag")))
    }
}

/// What a field given a bad tag is told.
fn not_a_tag(tag: &str) -> String {
    format!("{tag:?} is not a language tag such as ja, en or zh-Hant")
}

/// The languages a shop serves its menu in, the first its default (the
/// kitchen's, and the menu's when a guest asks for none of the others).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Languages(Vec<Language>);

impl Default for Languages {
    fn default() -> Self {
        Languages(vec![Language::english()])
    }
}

impl Languages {
    /// Checks a shop's list (`field` names it): 1–16 tags, none twice.
    pub fn validate(tags: Vec<String>, field: &str, errors: &mut FieldErrors) -> Languages {
        if tags.is_empty() || tags.len() > MAX_SHOP_LANGUAGES {
            errors.push(
                field,
                format!("must list 1 to {MAX_SHOP_LANGUAGES} languages, the default first"),
            );
        }
        let mut languages: Vec<Language> = Vec::with_capacity(tags.len());
        for (i, tag) in tags.iter().enumerate() {
            match Language::parse(tag) {
                Some(language) if languages.contains(&language) => {
                    errors.push(format!("{field}[{i}]"), "listed twice");
                }
                Some(language) => languages.push(language),
                None => errors.push(format!("{field}[{i}]"), not_a_tag(tag)),
            }
        }
        if languages.is_empty() {
            return Languages::default();
        }
        Languages(languages)
    }

    pub fn default_language(&self) -> &Language {
        // Never empty: built by `validate` (which falls back to English) or
        // read back from what it stored.
        self.0
            .first()
            .unwrap_or_else(|| unreachable!("a shop has a language"))
    }

    pub fn as_slice(&self) -> &[Language] {
        &self.0
    }

    /// The language a guest is shown: the first of `wanted` (in the order
    /// of preference) the shop serves, exactly or by its language subtag
    /// (`en-GB` gets `en`); otherwise the shop's default.
    pub fn negotiate<'a>(&self, wanted: impl IntoIterator<Item = &'a str>) -> &Language {
        for tag in wanted {
            let Some(wanted) = Language::parse(tag) else {
                continue;
            };
            let exact = self.0.iter().find(|served| **served == wanted);
            let related = || self.0.iter().find(|s| s.primary() == wanted.primary());
            if let Some(served) = exact.or_else(related) {
                return served;
            }
        }
        self.default_language()
    }

    /// The tags of an `Accept-Language` header, most wanted first.
    pub fn accepted(header: &str) -> Vec<String> {
        accept_language::parse(header)
    }
}

/// A display text of the catalog: one string whatever the language, or one
/// per language (`{"ja": "カレー", "en": "Curry"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum Text {
    Plain(String),
    /// Language tag → text, in canonical case once validated.
    Localized(BTreeMap<String, String>),
}

impl Default for Text {
    fn default() -> Self {
        Text::Plain(String::new())
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text::Plain(text.to_owned())
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text::Plain(text)
    }
}

impl Text {
    /// The text in `language`, or in one of its kin (`en` for `en-US`), or
    /// in `default`, or in any language it has.
    pub fn render<'a>(&'a self, language: &Language, default: &Language) -> &'a str {
        let texts = match self {
            Text::Plain(text) => return text,
            Text::Localized(texts) => texts,
        };
        let kin = |of: &Language| {
            texts
                .iter()
                .find(|(tag, _)| tag.split('-').next() == Some(of.primary()))
                .map(|(_, text)| text)
        };
        texts
            .get(language.as_str())
            .or_else(|| kin(language))
            .or_else(|| texts.get(default.as_str()))
            .or_else(|| kin(default))
            .or_else(|| texts.values().next())
            .map(String::as_str)
            .unwrap_or_default()
    }

    /// The text in the shop's default language: what the kitchen reads,
    /// and what orders keep.
    pub fn in_default(&self, languages: &Languages) -> &str {
        let default = languages.default_language();
        self.render(default, default)
    }
}

impl FieldErrors {
    /// Checks a catalog text as [`FieldErrors::text`] does, in each of its
    /// languages (`field.ja`); returns it trimmed, its tags in canonical case.
    pub fn localized(&mut self, field: &str, text: Text, min: usize, max: usize) -> Text {
        let texts = match text {
            Text::Plain(text) => {
                self.text(field, &text, min, max);
                return Text::Plain(text.trim().to_owned());
            }
            Text::Localized(texts) => texts,
        };
        if texts.is_empty() || texts.len() > MAX_TEXT_LANGUAGES {
            self.push(
                field,
                format!("must give the text in 1 to {MAX_TEXT_LANGUAGES} languages"),
            );
        }
        let mut checked = BTreeMap::new();
        for (tag, text) in texts {
            let Some(language) = Language::parse(&tag) else {
                self.push(field, not_a_tag(&tag));
                continue;
            };
            self.text(&format!("{field}.{tag}"), &text, min, max);
            if checked.insert(language.0, text.trim().to_owned()).is_some() {
                self.push(field, format!("{tag:?} is given twice"));
            }
        }
        Text::Localized(checked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn languages(tags: &[&str]) -> Languages {
        let mut errors = FieldErrors::default();
        let languages = Languages::validate(
            tags.iter().map(|t| t.to_string()).collect(),
            "languages",
            &mut errors,
        );
        assert!(errors.is_empty(), "{tags:?}");
        languages
    }

    #[test]
    fn tags_are_kept_in_canonical_case_and_nonsense_is_refused() {
        assert_eq!(Language::parse("EN-us").unwrap().as_str(), "en-US");
        assert_eq!(Language::parse("zh-hant").unwrap().as_str(), "zh-Hant");
        assert_eq!(
            Language::parse("en_US").unwrap().as_str(),
            "en-US",
            "as POSIX locales write it"
        );
        for bad in ["", "und", "english", "12", "ja-", "x-private"] {
            assert_eq!(Language::parse(bad), None, "{bad:?}");
        }
        let mut errors = FieldErrors::default();
        Languages::validate(
            vec!["ja".into(), "JA".into(), "xx-!!".into()],
            "languages",
            &mut errors,
        );
        let Err(crate::Rejection::Validation(errors)) = errors.finish(()) else {
            panic!("expected errors");
        };
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["languages[1]", "languages[2]"]);
        let mut errors = FieldErrors::default();
        assert_eq!(
            Languages::validate(vec![], "languages", &mut errors),
            Languages::default()
        );
        assert!(!errors.is_empty(), "an empty list is refused");
    }

    #[test]
    fn a_guest_gets_the_first_wanted_language_served_else_the_default() {
        let shop = languages(&["ja", "en", "zh-Hant"]);
        let pick = |wanted: &[&str]| shop.negotiate(wanted.iter().copied()).as_str().to_owned();
        assert_eq!(pick(&[]), "ja");
        assert_eq!(pick(&["en"]), "en");
        assert_eq!(pick(&["en-GB", "ja"]), "en", "by its language subtag");
        assert_eq!(pick(&["fr", "zh-TW", "en"]), "zh-Hant");
        assert_eq!(pick(&["fr", "!!"]), "ja");
        assert_eq!(
            Languages::accepted("fr;q=0.5, en-US, ja;q=0.9"),
            ["en-US", "ja", "fr"]
        );
    }

    #[test]
    fn a_text_falls_back_to_its_kin_then_the_default_then_any() {
        let (ja, en, fr) = (
            Language::parse("ja").unwrap(),
            Language::parse("en-US").unwrap(),
            Language::parse("fr").unwrap(),
        );
        let curry = Text::Localized(BTreeMap::from([
            ("en".to_owned(), "Curry".to_owned()),
            ("ja".to_owned(), "カレー".to_owned()),
        ]));
        assert_eq!(curry.render(&ja, &en), "カレー");
        assert_eq!(curry.render(&en, &ja), "Curry", "en for en-US");
        assert_eq!(curry.render(&fr, &ja), "カレー", "the default");
        let only_de = Text::Localized(BTreeMap::from([("de".to_owned(), "Wurst".to_owned())]));
        assert_eq!(only_de.render(&fr, &ja), "Wurst", "any");
        assert_eq!(Text::from("Ramen").render(&fr, &ja), "Ramen");
        assert_eq!(
            serde_json::to_string(&curry).unwrap(),
            r#"{"en":"Curry","ja":"カレー"}"#
        );
        assert_eq!(
            serde_json::to_string(&Text::from("Ramen")).unwrap(),
            r#""Ramen""#
        );
    }

    #[test]
    fn each_language_of_a_text_is_checked_and_trimmed() {
        let mut errors = FieldErrors::default();
        let given: Text =
            serde_json::from_str(r#"{"JA": " カレー ", "en": "", "nonsense!": "x"}"#).unwrap();
        errors.localized("items[0].name", given, 1, 80);
        let Err(crate::Rejection::Validation(errors)) = errors.finish(()) else {
            panic!("expected errors");
        };
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["items[0].name.en", "items[0].name"]);

        let mut errors = FieldErrors::default();
        let given: Text = serde_json::from_str(r#"{"JA": " カレー "}"#).unwrap();
        assert_eq!(
            errors.localized("name", given, 1, 80),
            Text::Localized(BTreeMap::from([("ja".to_owned(), "カレー".to_owned())]))
        );
        let mut errors = FieldErrors::default();
        errors.localized("name", Text::Localized(BTreeMap::new()), 1, 80);
        assert!(!errors.is_empty(), "no language at all");
    }
}
