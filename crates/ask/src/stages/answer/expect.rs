//! The expected answer type of a factoid question, from its question words: a duration for
//! 多久 / "how long", a temperature for 多少度, an amount of money for 多少钱, a date for 哪一年 /
//! "when", a number for 几 / "how many". Answer typing is the classic first step of factoid
//! question answering (Moldovan, Harabagiu et al., "The structure and performance of an
//! open-domain question answering system", ACL 2000): the passage that answers "how long" holds a
//! duration, while the sentence that merely repeats the question's words usually does not.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// Any length of time (多久, "how long").
    Duration,
    /// A number of days, months or years (几天, 几个月, 几年).
    Days,
    Months,
    Years,
    Temperature,
    Money,
    Date,
    Number,
    /// A procedure (如何, 怎么, "how do I"): a numbered list of steps.
    Steps,
    /// A length, height, weight, area or distance (多高, 多长, 多重, 多远, "how tall").
    Measure,
    /// A place (哪里, 什么地方, "where"): a place name or a word that locates something.
    Place,
}

/// Question words by the type they ask for; the first match wins, so longer cues come first.
const CUES: &[(&str, Expected)] = &[
    ("多少度", Expected::Temperature),
    ("几度", Expected::Temperature),
    ("水温", Expected::Temperature),
    ("温度", Expected::Temperature),
    ("what temperature", Expected::Temperature),
    ("how hot", Expected::Temperature),
    ("多少钱", Expected::Money),
    ("多少元", Expected::Money),
    ("价格", Expected::Money),
    ("费用", Expected::Money),
    ("how much does", Expected::Money),
    ("how much is", Expected::Money),
    ("what does it cost", Expected::Money),
    ("多久", Expected::Duration),
    ("多长时间", Expected::Duration),
    ("多少天", Expected::Days),
    ("几天", Expected::Days),
    ("how many days", Expected::Days),
    ("几个月", Expected::Months),
    ("多少个月", Expected::Months),
    ("how many months", Expected::Months),
    ("几年", Expected::Years),
    ("多少年", Expected::Years),
    ("how many years", Expected::Years),
    ("几小时", Expected::Duration),
    ("几分钟", Expected::Duration),
    ("how long", Expected::Duration),
    ("哪一年", Expected::Date),
    ("哪年", Expected::Date),
    ("几月", Expected::Date),
    ("几号", Expected::Date),
    ("哪天", Expected::Date),
    ("什么时候", Expected::Date),
    ("何时", Expected::Date),
    ("what year", Expected::Date),
    ("in which year", Expected::Date),
    (" when ", Expected::Date),
    ("多高", Expected::Measure),
    ("多长", Expected::Measure),
    ("多重", Expected::Measure),
    ("多远", Expected::Measure),
    ("多深", Expected::Measure),
    ("多宽", Expected::Measure),
    ("多大面积", Expected::Measure),
    ("how tall", Expected::Measure),
    ("how high", Expected::Measure),
    ("how far", Expected::Measure),
    ("how heavy", Expected::Measure),
    ("how big", Expected::Measure),
    ("什么地方", Expected::Place),
    ("哪里", Expected::Place),
    ("哪儿", Expected::Place),
    ("在哪", Expected::Place),
    ("何处", Expected::Place),
    ("哪个国家", Expected::Place),
    ("哪个城市", Expected::Place),
    (" where ", Expected::Place),
    ("how do i", Expected::Steps),
    ("how can i", Expected::Steps),
    ("how to", Expected::Steps),
    ("如何", Expected::Steps),
    ("怎么", Expected::Steps),
    ("怎样", Expected::Steps),
    ("步骤", Expected::Steps),
    ("多少", Expected::Number),
    ("几", Expected::Number),
    ("how many", Expected::Number),
    ("how much", Expected::Number),
];

/// Units that make a number a value of each type.
const DURATION_UNITS: &[&str] = &[
    "天", "日", "周", "星期", "个月", "月", "年", "小时", "分钟", "秒", "day", "week", "month", "year", "hour",
    "minute", "second",
];
const TEMPERATURE_UNITS: &[&str] = &["°C", "°F", "℃", "℉", "度", "°"];
const MONEY_UNITS: &[&str] = &["元", "块", "万元", "美元", "USD", "EUR", "dollar", "euro"];
const MEASURE_UNITS: &[&str] = &[
    "米", "公里", "千米", "公分", "厘米", "毫米", "英尺", "英寸", "公斤", "千克", "克", "吨", "斤", "平方", "亩",
    "公顷", "km", "cm", "mm", "m ", "kg", "meter", "metre", "feet", "foot", "inch", "mile", "pound", "ton",
];
const DATE_UNITS: &[&str] = &["年", "月", "日", "世纪"];
const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The type of answer `question` asks for, if its question words say.
pub fn expected(question: &str) -> Option<Expected> {
    let lower = format!(" {} ", skillrag_text::folded_lower(question));
    CUES.iter().find(|(cue, _)| lower.contains(cue)).map(|c| c.1)
}

/// How many values of the expected type `text` holds: numbers followed by one of the type's
/// units (`六个月`, `80–85°C`, `2 years`, `1998年`), currency signs, month names, numbered steps
/// (two at least), words that locate something.
pub fn values(text: &str, expected: Expected) -> usize {
    let lower = skillrag_text::folded_lower(text);
    let units = match expected {
        Expected::Duration => DURATION_UNITS,
        Expected::Days => &["天", "日", "day"],
        Expected::Months => &["个月", "月", "month"],
        Expected::Years => &["年", "year"],
        Expected::Measure => MEASURE_UNITS,
        Expected::Temperature => TEMPERATURE_UNITS,
        Expected::Money => MONEY_UNITS,
        Expected::Date => DATE_UNITS,
        Expected::Number => return numbers(&lower).count() + number_words(&lower).count(),
        Expected::Steps => {
            let steps = text.lines().filter(|l| super::units::is_numbered_item(l.trim_start())).count();
            return if steps >= 2 { steps } else { 0 };
        }
        Expected::Place => return LOCATING.iter().filter(|w| lower.contains(*w)).count(),
    };
    let mut found = 0;
    if expected == Expected::Money {
        found += lower.chars().filter(|c| ['¥', '$', '€', '￥'].contains(c)).count();
    }
    if expected == Expected::Date {
        found += MONTHS.iter().filter(|m| lower.contains(*m)).count();
    }
    let duration = matches!(expected, Expected::Duration | Expected::Days | Expected::Months | Expected::Years);
    let numbers: Vec<usize> = numbers(&lower).chain(number_words(&lower)).collect();
    found
        + numbers
            .into_iter()
            .filter(|&end| {
                let after = lower[end..].trim_start_matches([' ', '\u{a0}']);
                // 1976年 is a date, not a length of time.
                let year_date =
                    after.starts_with('年') && lower[..end].chars().rev().take_while(char::is_ascii_digit).count() >= 4;
                units.iter().any(|u| after.starts_with(&u.to_lowercase())) && !(duration && year_date)
            })
            .count()
}

/// Words that locate something, and the suffixes of Chinese place names.
const LOCATING: &[&str] = &[
    "位于",
    "分布于",
    "分布在",
    "产于",
    "栖息于",
    "生活在",
    "生活于",
    "坐落",
    "省",
    "市",
    "县",
    "海域",
    "洋",
    "岛",
    "located in",
    "found in",
    "lives in",
    "native to",
];

/// English numbers written as words.
const NUMBER_WORDS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen",
    "twenty", "thirty", "forty", "fifty", "sixty", "ninety", "hundred", "a few", "several",
];

/// The byte ends of the number words of lowercase `text` (whole words only).
fn number_words(text: &str) -> impl Iterator<Item = usize> + '_ {
    NUMBER_WORDS.iter().flat_map(move |w| {
        text.match_indices(w).filter_map(move |(i, _)| {
            let end = i + w.len();
            let before = text[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
            let after = text[end..].chars().next().is_none_or(|c| !c.is_alphanumeric());
            (before && after).then_some(end)
        })
    })
}

/// A numeral character: an ASCII or full-width digit, or a Chinese numeral.
fn numeral(c: char) -> bool {
    c.is_ascii_digit() || ('０'..='９').contains(&c) || "零〇一二三四五六七八九十百千万两半".contains(c)
}

/// The byte ends of the numbers of `text` (ranges such as `80–85` and decimals count as one).
fn numbers(text: &str) -> impl Iterator<Item = usize> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some((_, c)) = chars.next() {
            if !numeral(c) {
                continue;
            }
            let mut end = text.len();
            while let Some(&(i, c)) = chars.peek() {
                let joins = matches!(c, '.' | '–' | '-' | '~' | '～' | '至' | ',');
                if numeral(c) || (joins && text[i + c.len_utf8()..].starts_with(numeral)) {
                    chars.next();
                } else {
                    end = i;
                    break;
                }
            }
            return Some(end);
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn satisfies(text: &str, expected: Expected) -> bool {
        values(text, expected) > 0
    }

    #[test]
    fn question_words_give_the_type() {
        assert_eq!(expected("试用期最长可以约定多久？"), Some(Expected::Duration));
        assert_eq!(expected("绿茶用多少度的水泡？"), Some(Expected::Temperature));
        assert_eq!(expected("年休假有几天？"), Some(Expected::Days));
        assert_eq!(expected("年休假有幾天？"), Some(Expected::Days), "Traditional characters");
        assert_eq!(expected("When did the United States declare an emergency?"), Some(Expected::Date));
        assert_eq!(expected("How long does the update take?"), Some(Expected::Duration));
        assert_eq!(expected("路由器怎么恢复出厂设置？"), Some(Expected::Steps));
        assert_eq!(expected("黄鞍鹦嘴鱼主要分布在什么地方？"), Some(Expected::Place));
        assert!(satisfies("本鱼分布于印度太平洋区。", Expected::Place));
        assert_eq!(expected("纽西兰鸡毛松有多高？"), Some(Expected::Measure));
        assert!(satisfies("树高可达55米", Expected::Measure) && !satisfies("可以被砍伐", Expected::Measure));
        assert_eq!(expected("What does a blinking amber LED mean?"), None);
    }

    #[test]
    fn values_of_the_type() {
        assert!(satisfies("三年以上固定期限的劳动合同，试用期不得超过六个月。", Expected::Duration));
        assert!(!satisfies("同一用人单位与同一劳动者只能约定一次试用期。", Expected::Duration));
        assert!(satisfies("試用期不得超過六個月。", Expected::Duration), "Traditional characters");
        assert!(satisfies("水温：80–85°C。", Expected::Temperature));
        assert!(!satisfies("绿茶一般不需要洗茶。", Expected::Temperature));
        assert!(satisfies("The update takes about 5 minutes.", Expected::Duration));
        assert!(satisfies("年休假5天", Expected::Days) && !satisfies("连续工作1年以上的", Expected::Days));
        assert!(
            satisfies("在现代级驱逐舰上海试了5年", Expected::Years) && !satisfies("1976年6月开始设计", Expected::Years)
        );
        assert!(satisfies("1976年6月开始设计", Expected::Date));
        assert_eq!(values("年休假5天；已满10年的，年休假10天；已满20年的，年休假15天。", Expected::Days), 3);
        assert!(satisfies("1998年成立", Expected::Date));
        assert!(satisfies("costs $20", Expected::Money));
        assert!(satisfies("The LED blinks white for about five minutes.", Expected::Duration));
        assert!(!satisfies("someone at the door", Expected::Number));
        assert!(satisfies("To update:\n1. Sign in.\n2. Click Install.", Expected::Steps));
        assert_eq!(expected("How do I update the firmware?"), Some(Expected::Steps));
    }
}
