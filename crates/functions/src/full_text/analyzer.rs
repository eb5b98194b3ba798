//! How Doris's inverted indexes cut text into words, for its full-text operators and
//! `tokenize`: the analyzer an index's `PROPERTIES` name (`parser`, `parser_mode`,
//! `lower_case`, `stopwords`, `char_filter_*`), read from Doris's property-string form
//! (`"parser"="english", "lower_case"="true"`).
//! - `english`: runs of ASCII letters and digits; everything else separates words.
//! - `unicode` / `standard`: Unicode word boundaries (UAX #29), each CJK ideograph a word of
//!   its own, and 33 English stop words dropped unless `"stopwords"="none"`.
//! - `chinese`: jieba's segmentation (`coarse_grained`, the default, or `fine_grained`, every
//!   dictionary word), punctuation and spaces dropped.
//! - no parser: the whole value is one word, compared exactly.
//!
//! Words longer than 255 characters are cut (english) or skipped (unicode), as Doris's are.

use datafusion::common::{plan_err, Result};
use std::sync::OnceLock;
use unicode_segmentation::UnicodeSegmentation;

/// The longest word an index keeps.
const MAX_WORD: usize = 255;

/// Lucene's English stop words, which Doris's unicode parser drops by default.
const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parser {
    /// The whole value is one word.
    Whole,
    English,
    Unicode,
    Chinese {
        fine: bool,
    },
}

/// One way of cutting text into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Analyzer {
    pub(crate) parser: Parser,
    lower_case: bool,
    stop_words: bool,
    /// `char_replace`: each of these characters becomes `replacement` before cutting.
    replace: Option<(Vec<char>, char)>,
}

impl Analyzer {
    /// What a column without an inverted index is matched with (as Doris does when
    /// `enable_match_without_inverted_index` is on, its default): english, lower-cased.
    pub(crate) fn without_index() -> Analyzer {
        Analyzer {
            parser: Parser::English,
            lower_case: true,
            stop_words: false,
            replace: None,
        }
    }

    /// The analyzer Doris's property string `properties` names (`func` names the caller in
    /// errors).
    pub(crate) fn from_properties(func: &str, properties: &str) -> Result<Analyzer> {
        let properties = parse_properties(func, properties)?;
        let get = |key: &str| {
            properties
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| v.as_str())
        };
        let parser = match get("parser").map(str::to_ascii_lowercase).as_deref() {
            None | Some("none") | Some("keyword") => Parser::Whole,
            Some("english") => Parser::English,
            Some("unicode") | Some("standard") => Parser::Unicode,
            Some("chinese") => match get("parser_mode").map(str::to_ascii_lowercase).as_deref() {
                None | Some("coarse_grained") => Parser::Chinese { fine: false },
                Some("fine_grained") => Parser::Chinese { fine: true },
                Some(other) => {
                    return plan_err!(
                        "{func}: unknown parser_mode '{other}' (coarse_grained or fine_grained)"
                    )
                }
            },
            Some(other) => {
                return plan_err!(
                    "{func}: unsupported parser type '{other}'; only 'english', 'chinese', \
                     'unicode', 'standard' and 'none' are supported"
                )
            }
        };
        let flag = |key: &str, default: bool| match get(key).map(str::to_ascii_lowercase) {
            None => Ok(default),
            Some(v) if v == "true" => Ok(true),
            Some(v) if v == "false" => Ok(false),
            Some(v) => plan_err!("{func}: {key} must be true or false, not '{v}'"),
        };
        // Doris lower-cases by default from 2.1.2 on, when a parser cuts the text.
        let lower_case = flag("lower_case", parser != Parser::Whole)?;
        let stop_words = parser == Parser::Unicode
            && !get("stopwords")
                .or(get("use_stopwords"))
                .is_some_and(|v| v.eq_ignore_ascii_case("none"));
        let replace = match get("char_filter_type") {
            None => None,
            Some(t) if t.eq_ignore_ascii_case("char_replace") => {
                let pattern: Vec<char> = get("char_filter_pattern").unwrap_or("").chars().collect();
                let replacement = get("char_filter_replacement")
                    .and_then(|r| r.chars().next())
                    .unwrap_or(' ');
                Some((pattern, replacement))
            }
            Some(t) => return plan_err!("{func}: unsupported char_filter_type '{t}'"),
        };
        Ok(Analyzer {
            parser,
            lower_case,
            stop_words,
            replace,
        })
    }

    /// The words of `text`, in order.
    pub(crate) fn words(&self, text: &str) -> Vec<String> {
        let replaced;
        let text = match &self.replace {
            Some((pattern, replacement)) if !pattern.is_empty() => {
                replaced = text
                    .chars()
                    .map(|c| {
                        if pattern.contains(&c) {
                            *replacement
                        } else {
                            c
                        }
                    })
                    .collect::<String>();
                replaced.as_str()
            }
            _ => text,
        };
        let mut words = match self.parser {
            Parser::Whole => vec![text.to_string()],
            Parser::English => english_words(text),
            Parser::Unicode => text
                .unicode_words()
                .filter(|w| w.chars().count() <= MAX_WORD)
                .map(str::to_string)
                .collect(),
            Parser::Chinese { fine } => chinese_words(text, fine),
        };
        if self.lower_case {
            for word in &mut words {
                *word = word.to_lowercase();
            }
        }
        if self.stop_words {
            words.retain(|w| !STOP_WORDS.contains(&w.as_str()));
        }
        words
    }
}

/// Runs of ASCII letters and digits, cut every 255 characters.
fn english_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .flat_map(|w| w.as_bytes().chunks(MAX_WORD))
        .map(|chunk| String::from_utf8_lossy(chunk).into_owned())
        .collect()
}

/// jieba's words of `text` (every dictionary word when `fine`), without punctuation or
/// spaces.
fn chinese_words(text: &str, fine: bool) -> Vec<String> {
    static JIEBA: OnceLock<jieba_rs::Jieba> = OnceLock::new();
    let jieba = JIEBA.get_or_init(jieba_rs::Jieba::new);
    let words: Vec<&str> = if fine {
        // Every dictionary word; a single character only where no longer word covers it
        // (jieba's full mode).
        let tokens = jieba.cut_all(text);
        let mut covered = vec![false; tokens.iter().map(|t| t.end).max().unwrap_or(0)];
        for t in tokens.iter().filter(|t| t.end - t.start > 1) {
            covered[t.start..t.end].fill(true);
        }
        tokens
            .iter()
            .filter(|t| t.end - t.start > 1 || !covered[t.start])
            .map(|t| t.word)
            .collect()
    } else {
        jieba.cut(text, true).into_iter().map(|t| t.word).collect()
    };
    words
        .into_iter()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(str::to_string)
        .collect()
}

/// Doris's property string: `"key"="value"` pairs (either quote), separated by commas.
fn parse_properties(func: &str, text: &str) -> Result<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (key, after) = quoted(func, rest)?;
        let after = after.trim_start();
        let Some(after) = after.strip_prefix('=') else {
            return plan_err!("{func}: expected = after \"{key}\" in '{text}'");
        };
        let (value, after) = quoted(func, after.trim_start())?;
        pairs.push((key, value));
        rest = after.trim_start();
        if let Some(after) = rest.strip_prefix(',') {
            rest = after.trim_start();
        } else if !rest.is_empty() {
            return plan_err!("{func}: expected , between properties in '{text}'");
        }
    }
    Ok(pairs)
}

/// A `"quoted"` or `'quoted'` word at the start of `text`, and what follows it.
fn quoted<'a>(func: &str, text: &'a str) -> Result<(String, &'a str)> {
    let Some(quote) = text.chars().next().filter(|c| *c == '"' || *c == '\'') else {
        return plan_err!("{func}: properties are written \"key\"=\"value\", not '{text}'");
    };
    let body = &text[1..];
    match body.find(quote) {
        Some(end) => Ok((body[..end].to_string(), &body[end + 1..])),
        None => plan_err!("{func}: unclosed quote in '{text}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(properties: &str, text: &str) -> Vec<String> {
        Analyzer::from_properties("t", properties)
            .expect("analyzer")
            .words(text)
    }

    #[test]
    fn english_keeps_ascii_letters_and_digits_lower_cased() {
        assert_eq!(
            words(r#""parser"="english""#, "I love CHINA, café_x 中文 a1"),
            ["i", "love", "china", "caf", "x", "a1"]
        );
        assert_eq!(
            words(r#""parser"="english","lower_case"="false""#, "Hello World"),
            ["Hello", "World"]
        );
    }

    #[test]
    fn unicode_cuts_ideographs_apart_and_drops_stop_words() {
        assert_eq!(
            words(r#""parser"="unicode""#, "I love CHINA 我爱我的祖国"),
            ["i", "love", "china", "我", "爱", "我", "的", "祖", "国"]
        );
        assert_eq!(
            words("'parser'='unicode'", "华夏智胜新税股票A"),
            ["华", "夏", "智", "胜", "新", "税", "股", "票"]
        );
        assert_eq!(
            words(
                "'parser'='unicode', 'stopwords'='none'",
                "华夏智胜新税股票A"
            ),
            ["华", "夏", "智", "胜", "新", "税", "股", "票", "a"]
        );
        assert_eq!(
            words(r#""parser"="standard""#, "12345678@qq.com"),
            ["12345678", "qq.com"]
        );
    }

    #[test]
    fn chinese_segments_with_jieba_in_both_modes() {
        assert_eq!(
            words("'parser'='chinese'", "我来到北京清华大学"),
            ["我", "来到", "北京", "清华大学"]
        );
        assert_eq!(
            words(
                "'parser'='chinese','parser_mode'='fine_grained'",
                "我来到北京清华大学"
            ),
            ["我", "来到", "北京", "清华", "清华大学", "华大", "大学"]
        );
        assert_eq!(
            words(
                r#""parser"="chinese","parser_mode"="coarse_grained""#,
                "武汉市长江大桥"
            ),
            ["武汉市", "长江大桥"]
        );
    }

    #[test]
    fn no_parser_keeps_the_whole_value_and_bad_properties_are_errors() {
        assert_eq!(words("", "Hello, World"), ["Hello, World"]);
        assert_eq!(
            words(
                r#""parser"="english","char_filter_type"="char_replace","char_filter_pattern"="._""#,
                "a.b_c"
            ),
            ["a", "b", "c"]
        );
        for bad in [
            r#""parser"="klingon""#,
            r#""parser"="#,
            "parser=english",
            r#""lower_case"="yes""#,
        ] {
            assert!(Analyzer::from_properties("t", bad).is_err(), "{bad}");
        }
    }
}
