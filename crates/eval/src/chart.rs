//! A small SVG bar chart of per-skill metrics (no plotting dependency for a dozen bars).

use crate::Report;

const METRICS: [(&str, &str); 4] =
    [("routing", "#4e79a7"), ("hit@5", "#59a14f"), ("not_found", "#f28e2b"), ("rejected", "#e15759")];

/// Grouped bars per skill: routing accuracy, hit@5, unanswerable → not_found, out-of-scope rejected.
pub fn svg_chart(report: &Report) -> String {
    let groups: Vec<(&String, [Option<f64>; 4])> = report
        .per_skill
        .iter()
        .map(|(skill, m)| (skill, [m.routing_accuracy, m.hit_at_5, m.unanswerable_not_found, m.out_of_scope_rejected]))
        .collect();
    let (bar, gap, height, top, left) = (18.0, 30.0, 200.0, 40.0, 40.0);
    let group_width = bar * 4.0 + gap;
    let width = left + group_width * groups.len() as f64 + 20.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        top + height + 60.0
    );
    svg.push_str(&format!(
        "<text x=\"{left}\" y=\"20\" font-size=\"13\">{} — {}</text>\n",
        escape(&report.system),
        escape(&report.bench)
    ));
    for tick in [0.0, 0.5, 1.0] {
        let y = top + height * (1.0 - tick);
        svg.push_str(&format!(
            "<line x1=\"{left}\" x2=\"{:.0}\" y1=\"{y:.0}\" y2=\"{y:.0}\" stroke=\"#ddd\"/><text x=\"8\" y=\"{:.0}\">{tick:.1}</text>\n",
            width - 10.0,
            y + 4.0
        ));
    }
    for (g, (skill, values)) in groups.iter().enumerate() {
        let x0 = left + g as f64 * group_width + gap / 2.0;
        for (i, value) in values.iter().enumerate() {
            let Some(v) = value else { continue };
            let h = height * v.clamp(0.0, 1.0);
            svg.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bar}\" height=\"{h:.1}\" fill=\"{}\"><title>{}: {v:.3}</title></rect>\n",
                x0 + i as f64 * bar,
                top + height - h,
                METRICS[i].1,
                METRICS[i].0
            ));
        }
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.0}\" text-anchor=\"middle\">{}</text>\n",
            x0 + bar * 2.0,
            top + height + 16.0,
            escape(skill)
        ));
    }
    for (i, (name, color)) in METRICS.iter().enumerate() {
        let x = left + i as f64 * 90.0;
        let y = top + height + 36.0;
        svg.push_str(&format!(
            "<rect x=\"{x:.0}\" y=\"{:.0}\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{:.0}\" y=\"{y:.0}\">{name}</text>\n",
            y - 9.0,
            x + 14.0
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
