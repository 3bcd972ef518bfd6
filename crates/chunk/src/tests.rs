use super::*;

fn cfg(size: usize, overlap: usize) -> ChunkConfig {
    ChunkConfig { size, overlap }
}

/// Every piece is the text at its span, within the size (unless it holds a protected code block).
fn check_invariants(text: &str, pieces: &[Piece], config: &ChunkConfig) {
    let chars: Vec<char> = text.chars().collect();
    for p in pieces {
        let at_span: String = chars[p.span.0..p.span.1].iter().collect();
        assert_eq!(at_span, p.text, "span does not match text");
        assert!(!p.text.trim().is_empty(), "empty piece");
        if !p.text.contains("```") {
            assert!(
                p.text.chars().count() <= config.size,
                "piece of {} chars > {}",
                p.text.chars().count(),
                config.size
            );
        }
    }
    for w in pieces.windows(2) {
        assert!(w[1].span.0 >= w[0].span.0, "pieces out of order");
        assert!(w[1].span.1 > w[0].span.1, "no progress");
        if w[1].span.0 < w[0].span.1 {
            let overlap = w[0].span.1 - w[1].span.0;
            assert!(overlap <= config.overlap, "overlap {overlap} > {}", config.overlap);
        }
    }
}

/// All non-whitespace characters of the text appear in some piece, in order.
fn covers(text: &str, pieces: &[Piece]) -> bool {
    let mut covered = vec![false; text.chars().count()];
    for p in pieces {
        covered[p.span.0..p.span.1].iter_mut().for_each(|c| *c = true);
    }
    text.chars().zip(covered).all(|(c, cov)| cov || c.is_whitespace())
}

#[test]
fn empty_and_whitespace_text() {
    assert!(chunk_text("", &cfg(500, 80)).is_empty());
    assert!(chunk_markdown("   \n\n  \n", &cfg(500, 80)).is_empty());
    assert!(chunk_markdown("# Only a heading\n", &cfg(500, 80)).is_empty());
}

#[test]
fn short_text_is_one_piece() {
    let pieces = chunk_text("Hello world.", &cfg(500, 80));
    assert_eq!(pieces, vec![Piece { heading: vec![], text: "Hello world.".into(), span: (0, 12), table_header: None }]);
}

#[test]
fn chinese_splits_at_sentence_punctuation_with_overlap() {
    let sentence = "用人单位应当依法建立和完善劳动规章制度，保障劳动者享有劳动权利、履行劳动义务。";
    let text = sentence.repeat(40);
    let config = cfg(200, 50);
    let pieces = chunk_text(&text, &config);
    check_invariants(&text, &pieces, &config);
    assert!(covers(&text, &pieces));
    assert!(pieces.len() > 5);
    for p in &pieces {
        assert!(p.text.starts_with("用人单位"), "piece starts mid-sentence: {}", p.text);
        assert!(p.text.ends_with('。'));
    }
    // Sentences are 39 chars, so each later piece repeats exactly the last sentence.
    assert!(pieces.windows(2).all(|w| w[0].span.1 - w[1].span.0 == 39));
}

#[test]
fn english_prefers_paragraphs_then_sentences() {
    let para = "The vaccine was tested in three phases. Each phase enrolled more volunteers than the last. Results were published in 2021.";
    let text = format!("{para}\n\n{para}\n\n{para}");
    let config = cfg(260, 60);
    let pieces = chunk_text(&text, &config);
    check_invariants(&text, &pieces, &config);
    assert!(covers(&text, &pieces));
    assert_eq!(pieces[0].text, format!("{para}\n\n{para}"));
    assert!(pieces[1].text.starts_with("Results were published") || pieces[1].text.starts_with("The vaccine"));
    assert!(pieces[1].text.ends_with("2021."));
}

#[test]
fn decimals_do_not_end_sentences() {
    // Size 22 forces one sentence per piece; `2.5` and `1.1` must not be cut.
    let text = "R0 was 2.5 in Wuhan. It fell to 1.1 later.";
    let pieces: Vec<String> = chunk_text(text, &cfg(22, 0)).into_iter().map(|p| p.text).collect();
    assert_eq!(pieces, vec!["R0 was 2.5 in Wuhan.", "It fell to 1.1 later."]);
}

#[test]
fn one_megabyte_line_without_punctuation() {
    let text = "无标点的长文本".repeat(150_000); // 1,050,000 chars on one line
    let config = cfg(500, 80);
    let start = std::time::Instant::now();
    let pieces = chunk_text(&text, &config);
    let elapsed = start.elapsed();
    check_invariants(&text, &pieces, &config);
    assert!(covers(&text, &pieces));
    // Windows of 420 new chars each (500 minus the 80-char overlap).
    assert_eq!(pieces.len(), text.chars().count().div_ceil(420));
    // A bound for quadratic behaviour (minutes), not a timing: speed is in bench/.
    assert!(elapsed.as_secs() < 120, "chunking 1 MB took {elapsed:?}");
}

#[test]
fn english_without_punctuation_cuts_at_words() {
    let text = "alpha beta gamma delta ".repeat(100);
    let config = cfg(100, 20);
    let pieces = chunk_text(&text, &config);
    check_invariants(&text, &pieces, &config);
    for p in &pieces {
        assert!(["alpha", "beta", "gamma", "delta"].iter().any(|w| p.text.starts_with(w)), "{}", p.text);
        assert!(["alpha", "beta", "gamma", "delta"].iter().any(|w| p.text.ends_with(w)), "{}", p.text);
    }
}

#[test]
fn emoji_are_never_split() {
    let family = "👨‍👩‍👧‍👦"; // one grapheme, seven chars
    let text = format!("{family}🎉").repeat(200);
    let config = cfg(50, 10);
    let pieces = chunk_text(&text, &config);
    check_invariants(&text, &pieces, &config);
    for p in &pieces {
        assert!(p.text.starts_with(family) || p.text.starts_with('🎉'), "split inside an emoji: {:?}", p.text);
    }
}

#[test]
fn crlf_line_endings() {
    let text = "# Title\r\n\r\nFirst paragraph line one.\r\nLine two.\r\n\r\n## Part\r\n\r\nSecond part.\r\n";
    let pieces = chunk_markdown(text, &cfg(500, 80));
    assert_eq!(pieces.len(), 2);
    assert_eq!(pieces[0].heading, vec!["Title"]);
    assert_eq!(pieces[0].text, "First paragraph line one.\r\nLine two.");
    assert_eq!(pieces[1].heading, vec!["Title", "Part"]);
    assert_eq!(pieces[1].text, "Second part.");
}

#[test]
fn heading_path_follows_levels() {
    let text = "# 劳动合同法\n\n总则。\n\n## 第一章 总则\n\n第一条 为了完善劳动合同制度。\n\n### 第一节\n\n内容。\n\n## 第二章 订立\n\n第七条 用人单位自用工之日起即与劳动者建立劳动关系。\n";
    let pieces = chunk_markdown(text, &cfg(500, 80));
    let headings: Vec<Vec<&str>> = pieces.iter().map(|p| p.heading.iter().map(String::as_str).collect()).collect();
    assert_eq!(
        headings,
        vec![
            vec!["劳动合同法"],
            vec!["劳动合同法", "第一章 总则"],
            vec!["劳动合同法", "第一章 总则", "第一节"],
            vec!["劳动合同法", "第二章 订立"],
        ]
    );
}

#[test]
fn code_block_stays_with_its_explanation() {
    let intro = "Install the CLI and index the example project. The command below builds everything.";
    let code = "```bash\ncargo install --path crates/cli\nskillrag init demo\n\nskillrag -C demo index\n```";
    let filler = "Another paragraph that talks about something else entirely, long enough to matter. ".repeat(3);
    let text = format!("# Setup\n\n{filler}\n\n{intro}\n\n{code}\n\n{filler}\n");
    let config = cfg(200, 40);
    let pieces = chunk_markdown(&text, &config);
    check_invariants(&text, &pieces, &config);
    let with_code: Vec<_> = pieces.iter().filter(|p| p.text.contains("cargo install")).collect();
    assert_eq!(with_code.len(), 1, "{pieces:#?}");
    assert!(with_code[0].text.contains(intro) && with_code[0].text.contains("skillrag -C demo index\n```"));
}

#[test]
fn code_block_first_in_section_joins_the_text_after_it() {
    let text = "## Usage\n\n```\nskillrag search \"query\"\n```\n\nThe search command prints scores.\n";
    let pieces = chunk_markdown(text, &cfg(500, 80));
    assert_eq!(pieces.len(), 1);
    assert!(pieces[0].text.ends_with("prints scores."));
}

#[test]
fn huge_code_block_is_cut_by_lines() {
    let code = format!("```\n{}```", "let x = compute(1, 2, 3);\n".repeat(200));
    let text = format!("Explanation.\n\n{code}\n");
    let config = cfg(200, 40);
    let pieces = chunk_markdown(&text, &config);
    assert!(pieces.len() > 10);
    assert!(pieces.iter().all(|p| p.text.chars().count() <= 200));
}

#[test]
fn deterministic() {
    let text = "第一条 为了完善劳动合同制度，明确劳动合同双方当事人的权利和义务。\n\n".repeat(50);
    let a = chunk_markdown(&text, &cfg(300, 60));
    let b = chunk_markdown(&text, &cfg(300, 60));
    assert_eq!(a, b);
}

#[test]
fn yaml_front_matter_is_not_content() {
    let text = "---\ntitle: x\n---\n# Doc\n\nBody.\n";
    let pieces = chunk_markdown(text, &cfg(500, 80));
    assert_eq!(pieces.len(), 1);
    assert_eq!(pieces[0].text, "Body.");
}

#[test]
fn config_validation() {
    assert!(cfg(500, 80).validate().is_ok());
    assert_eq!(cfg(8, 0).validate(), Err(ConfigError::SizeTooSmall(8)));
    assert!(cfg(100, 60).validate().is_err());
}

#[test]
fn sentences_with_offsets() {
    let text = "第十九条 劳动合同期限三个月以上不满一年的，试用期不得超过一个月。同一用人单位只能约定一次试用期。\nNew line. R0 was 2.5 here.";
    let s = sentences(text);
    let texts: Vec<&str> = s.iter().map(|(_, t)| *t).collect();
    assert_eq!(
        texts,
        vec![
            "第十九条 劳动合同期限三个月以上不满一年的，试用期不得超过一个月。",
            "同一用人单位只能约定一次试用期。",
            "New line.",
            "R0 was 2.5 here."
        ]
    );
    for (offset, t) in s {
        assert_eq!(&text[offset..offset + t.len()], t);
    }
}

#[test]
fn a_terminator_inside_short_parentheses_ends_no_sentence() {
    let texts = |t: &'static str| sentences(t).into_iter().map(|(_, s)| s).collect::<Vec<_>>();
    assert_eq!(
        texts("北宋庆历间中国的毕升（？-约1051）发明的泥活字标志活字印刷的诞生。此后传入朝鲜。"),
        vec!["北宋庆历间中国的毕升（？-约1051）发明的泥活字标志活字印刷的诞生。", "此后传入朝鲜。"]
    );
    // An unclosed bracket far before does not hold back the sentences after it.
    let long = "（注：这一段没有闭合的括号，后面还有很长很长很长很长的说明文字。下一句。";
    assert_eq!(sentences(long).len(), 2, "{:?}", sentences(long));
}

#[test]
fn sentences_join_wrapped_lines_but_not_list_items() {
    let text = "A factory reset erases all settings, including the\nWi-Fi name. It takes two minutes.\n\n1. Leave it on.\n2. Hold the pin\nfor 10 seconds.\n- **水温**：80–85°C\n- 投茶量：3 克";
    let texts: Vec<&str> = sentences(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        texts,
        vec![
            "A factory reset erases all settings, including the\nWi-Fi name.",
            "It takes two minutes.",
            "1. Leave it on.",
            "2. Hold the pin\nfor 10 seconds.",
            "- **水温**：80–85°C",
            "- 投茶量：3 克"
        ]
    );
}

#[test]
fn legal_preset_cuts_at_articles_with_chapters_in_the_heading() {
    let law = "# 中华人民共和国劳动合同法\n\n第一章 总则\n\n第一条 为了完善劳动合同制度，制定本法。\n\n第二条 本法适用于用人单位与劳动者。\n\n依法订立的劳动合同受法律保护。\n\n第二章 劳动合同的订立\n\n第一节 一般规定\n\n第七条 用人单位自用工之日起即与劳动者建立劳动关系。\n";
    let config = ChunkConfig { size: 500, overlap: 80 };
    let pieces = chunk_document(law, true, Preset::Legal, &config);
    let texts: Vec<&str> = pieces.iter().map(|p| p.text.as_str()).collect();
    // Whole articles of one chapter are packed together; chapters never mix.
    assert_eq!(
        texts,
        vec![
            "第一条 为了完善劳动合同制度，制定本法。\n\n第二条 本法适用于用人单位与劳动者。\n\n依法订立的劳动合同受法律保护。",
            "第七条 用人单位自用工之日起即与劳动者建立劳动关系。",
        ]
    );
    // Small chunks: one article each, never cut.
    let small = chunk_document(law, true, Preset::Legal, &ChunkConfig { size: 40, overlap: 5 });
    assert_eq!(small.len(), 3, "{small:?}");
    assert!(small[1].text.starts_with("第二条") && small[1].text.ends_with("受法律保护。"));
    assert_eq!(pieces[0].heading, vec!["中华人民共和国劳动合同法", "第一章 总则"]);
    assert_eq!(pieces[1].heading, vec!["中华人民共和国劳动合同法", "第二章 劳动合同的订立", "第一节 一般规定"]);
    // Spans still point into the text.
    for p in &pieces {
        let span: String = law.chars().skip(p.span.0).take(p.span.1 - p.span.0).collect();
        assert_eq!(span, p.text);
    }
}

#[test]
fn legal_preset_labels_every_piece_of_a_long_article() {
    let long = "用人单位应当依法支付劳动报酬。".repeat(12);
    let law = format!("第三条 {long}\n\n第四条 短条文。\n");
    let config = ChunkConfig { size: 60, overlap: 10 };
    let pieces = chunk_document(&law, false, Preset::Legal, &config);
    let article3: Vec<_> = pieces.iter().filter(|p| p.heading == vec!["第三条".to_string()]).collect();
    assert!(article3.len() > 1, "{pieces:?}");
    assert!(pieces.iter().all(|p| !(p.text.contains("第四条") && p.text.contains("用人单位"))), "articles mixed");
    assert_eq!(pieces.last().map(|p| p.text.as_str()), Some("第四条 短条文。"));
}

#[test]
fn faq_preset_keeps_each_question_with_its_answer() {
    let faq = "Q: How do I reset the router?\nA: Hold the reset button for 10 seconds.\n\nQ: What is the default password?\nA: It is printed on the label.\n";
    let pieces = chunk_document(faq, false, Preset::Faq, &ChunkConfig::default());
    assert_eq!(pieces.len(), 2);
    assert!(pieces[0].text.starts_with("Q: How do I reset") && pieces[0].text.ends_with("10 seconds."));
    assert!(pieces[1].text.starts_with("Q: What is the default password?"));
    // General packs both into one chunk.
    assert_eq!(chunk_document(faq, false, Preset::General, &ChunkConfig::default()).len(), 1);
}

#[test]
fn the_piece_limit_is_checked_while_chunking() {
    let text = "The cat sat on the mat. ".repeat(2000);
    let config = cfg(100, 20);
    let all = chunk_text(&text, &config);
    assert!(all.len() > 100, "{}", all.len());
    check_invariants(&text, &all, &config);
    // Under the limit: the same pieces; over it: refused, naming the limit.
    assert_eq!(chunk_document_within(&text, false, Preset::General, &config, all.len()), Ok(all.clone()));
    let refused = chunk_document_within(&text, false, Preset::General, &config, 10);
    assert_eq!(refused, Err(TooManyPieces { limit: 10 }));
    // Across sections too.
    let sections: String = (0..30).map(|i| format!("# Part {i}\n\nOne short paragraph.\n\n")).collect();
    assert_eq!(chunk_document_within(&sections, true, Preset::General, &config, 30).map(|p| p.len()), Ok(30));
    assert!(chunk_document_within(&sections, true, Preset::General, &config, 29).is_err());
}

#[test]
fn spans_of_overlapping_pieces_on_one_long_line() {
    // One line of short sentences: every piece after the first starts inside the previous one.
    let text = "猫坐在垫子上。The cat sat on the mat. ".repeat(3000);
    let config = cfg(120, 30);
    let pieces = chunk_text(&text, &config);
    check_invariants(&text, &pieces, &config);
    assert!(pieces.windows(2).all(|w| w[1].span.0 < w[0].span.1), "the pieces overlap");
}

fn long_table(header: &str, rows: usize) -> String {
    let mut text = format!("# Staff\n\nWho does what.\n\n{header}\n|---|---|\n");
    for i in 0..rows {
        text.push_str(&format!("| person {i} | role number {i} |\n"));
    }
    text.push_str("\nAfter the table, a closing paragraph.\n");
    text
}

#[test]
fn pieces_that_continue_a_table_carry_its_header() {
    let text = long_table("| Name | Role |", 40);
    let config = cfg(200, 40);
    let pieces = chunk_markdown(&text, &config);
    check_invariants(&text, &pieces, &config);
    assert!(covers(&text.replace("# Staff", "       "), &pieces), "all but the heading line");
    assert!(pieces.len() > 5);
    assert!(pieces[0].text.contains("| Name | Role |\n|---|---|") && pieces[0].table_header.is_none());
    let inside: Vec<&Piece> = pieces.iter().filter(|p| p.text.starts_with("| person")).collect();
    assert!(inside.len() >= 4);
    for p in &inside {
        assert_eq!(p.table_header.as_deref(), Some("| Name | Role |\n|---|---|"), "{}", p.text);
        assert!(!p.text.contains("| Name |"), "the header is not repeated in the text itself");
    }
    let last = pieces.last().unwrap();
    if !last.text.starts_with("| person") {
        assert_eq!(last.table_header, None, "a piece after the table continues no table");
    }
    // Only pieces that start inside the table get it.
    assert!(pieces.iter().filter(|p| p.table_header.is_some()).all(|p| p.text.starts_with("| person")));
}

#[test]
fn a_blank_header_is_not_repeated_and_plain_text_has_no_tables() {
    let text = long_table("|  |  |", 40);
    let pieces = chunk_markdown(&text, &cfg(200, 40));
    assert!(pieces.len() > 5);
    assert!(pieces.iter().all(|p| p.table_header.is_none()));
    let text = long_table("| Name | Role |", 40);
    assert!(chunk_text(&text, &cfg(200, 40)).iter().all(|p| p.table_header.is_none()));
}

#[test]
fn a_table_that_starts_a_piece_needs_no_header_again() {
    let text = format!("{}\n\n| A | B |\n|---|---|\n| 1 | 2 |\n", "Long prose sentence here. ".repeat(12));
    let pieces = chunk_markdown(&text, &cfg(200, 40));
    let table = pieces.iter().find(|p| p.text.contains("| 1 | 2 |")).unwrap();
    assert!(table.text.contains("| A | B |"));
    assert_eq!(table.table_header, None);
}
