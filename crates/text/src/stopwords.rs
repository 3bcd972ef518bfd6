//! Function words dropped by the analyzer. Short on purpose: BM25's IDF already discounts common
//! words; these are the ones frequent enough in questions to add noise to every query, and the
//! interrogative forms that make a sentence a question without saying what about.

#[rustfmt::skip]
const CHINESE: &[&str] = &[
    "的", "了", "是", "在", "和", "与", "或", "及", "等", "吗", "呢", "吧", "啊", "呀", "么", "也", "就", "都", "而",
    "之", "其", "这", "那", "这个", "那个", "这些", "那些", "什么", "怎么", "怎样", "为什么", "哪些", "哪个",
    "哪里", "多少", "几", "谁", "被", "把", "对", "从", "向", "给", "让", "我", "你", "他", "她", "它", "我们", "你们",
    "他们", "请问", "一下", "个", "着", "过", "得", "地",
    // Interrogative forms.
    "是否", "能否", "可否", "能不能", "可不可以", "是不是", "有没有", "会不会", "要不要", "该不该", "怎么办",
    "怎么样", "如何", "为何", "为啥", "咋", "哪儿", "多久",
];

#[rustfmt::skip]
const ENGLISH: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "is", "are",
    "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "do", "does", "did", "what",
    "which", "who", "whom", "how", "why", "when", "where", "i", "you", "he", "she", "we", "they", "me", "my", "your",
    "our", "their", "there", "than", "then", "so", "if", "into", "about", "can", "could", "would", "should", "will",
    "has", "have", "had",
];

pub fn is_chinese_stopword(word: &str) -> bool {
    CHINESE.contains(&word)
}

pub fn is_english_stopword(word: &str) -> bool {
    ENGLISH.contains(&word)
}
