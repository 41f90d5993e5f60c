//! `hco corpus generate`: fills new narrative sets through any OpenAI-compatible chat endpoint
//! with the generation prompt of the aCAPTCHA paper (Appendix A, domains of Appendix B), then
//! validates each set and runs the linter before accepting it. Nothing is written for a set
//! that fails. [`operator`] loads the corpus a node runs its agent class on; [`timing`] sets
//! the paper's human timing model over a corpus beside the node's budgets.

pub mod operator;
pub mod schedule;
pub mod timing;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use hco_challenges::narrative::{Corpus, LintConfig, lint, parse_set};
use serde_json::{Value, json};

const TEMPLATE: &str = include_str!("prompt.md");

/// Appendix B: domain id, description, entity examples, reasoning patterns.
pub const DOMAINS: &[(&str, &str, &str, &str)] = &[
    (
        "biochemistry",
        "Enzyme kinetics, assay results, inhibitor profiles, metabolic pathways",
        "Enzymes, compounds, metabolic intermediates, receptor subtypes",
        "Kinetic anomaly persistence, inhibition mechanism attribution, replicate confirmation",
    ),
    (
        "cybersecurity",
        "Threat intelligence, vulnerability analysis, incident response, network forensics",
        "CVEs, IP addresses, malware families, attack vectors, threat actors",
        "Attack attribution, false positive elimination, lateral movement tracing",
    ),
    (
        "clinical_trials",
        "Drug efficacy, adverse events, patient cohorts, endpoint analysis",
        "Drug candidates, adverse events, patient subgroups, biomarkers",
        "Efficacy signal vs. confounding, adverse event attribution, subgroup analysis",
    ),
    (
        "food_safety",
        "Contaminant screening, microbiological testing, batch traceability, regulatory compliance",
        "Pathogens, chemical residues, food batches, testing methods, tolerance limits",
        "Contamination source tracing, threshold exceedance attribution, cross-batch comparison",
    ),
    (
        "financial_markets",
        "Macroeconomic indicators, equity indices, yield curves, credit spreads",
        "Economic indicators, funds, currency pairs, sector indices",
        "Sustained deviation vs. noise, trend reversal attribution, cross-market correlation",
    ),
];

/// The full prompt for a domain, with the template's parameters substituted.
pub fn prompt(domain: &str) -> anyhow::Result<String> {
    let Some((_, description, entities, reasoning)) = DOMAINS.iter().find(|d| d.0 == domain) else {
        let known: Vec<_> = DOMAINS.iter().map(|d| d.0).collect();
        bail!("unknown domain `{domain}`; known: {known:?}");
    };
    let mut text = TEMPLATE.to_owned();
    for (name, value) in [
        ("total_min_tokens", "1050"),
        ("total_max_tokens", "3300"),
        ("min_narrative_tokens", "350"),
        ("max_narrative_tokens", "1100"),
        ("min_entities", "4"),
        ("max_entities", "7"),
        ("min_misleading_paragraphs", "1"),
        ("min_numeric_values", "4"),
        ("min_info_pieces", "2"),
        ("min_questions", "3"),
        ("max_questions", "3"),
        ("max_answer_length", "20"),
        ("min_reasoning_types", "3"),
    ] {
        text = text.replace(&format!("${name}"), value);
    }
    text.push_str(&format!(
        "\n## Domain\n{description}\nTypical entities in this domain: {entities}\nTypical reasoning patterns: {reasoning}\n"
    ));
    Ok(text)
}

/// The JSON object inside a model's reply (tolerates code fences and surrounding prose).
pub fn extract_json(content: &str) -> Option<&str> {
    let start = content.find('{')?;
    let end = content.rfind('}')?;
    (end > start).then(|| &content[start..=end])
}

/// Generates `count` sets for `domain` into `out`; returns the files written.
pub fn generate(
    endpoint: &str,
    model: &str,
    api_key: Option<&str>,
    domain: &str,
    count: usize,
    out: &Path,
) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let system = prompt(domain)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(600)))
        .build()
        .into();
    let url = format!("{}/chat/completions", endpoint.trim_end_matches('/'));
    let mut written = Vec::new();
    for i in 0..count {
        let body = json!({
            "model": model,
            "temperature": 0.8,
            "messages": [
                { "role": "system", "content": system },
                { "role": "user", "content": format!("Generate one new narrative set for the domain `{domain}`.") },
            ],
        });
        let mut request = agent.post(&url);
        if let Some(key) = api_key {
            request = request.header("authorization", &format!("Bearer {key}"));
        }
        let mut reply = request
            .send_json(&body)
            .with_context(|| format!("cannot reach {url}"))?;
        let status = reply.status().as_u16();
        let reply: Value = reply
            .body_mut()
            .read_json()
            .context("the endpoint did not answer JSON")?;
        if status != 200 {
            bail!("the endpoint answered {status}: {reply}");
        }
        let content = reply["choices"][0]["message"]["content"]
            .as_str()
            .context("no choices[0].message.content in the reply")?;
        let Some(json) = extract_json(content) else {
            tracing::warn!(set = i, "the reply holds no JSON object; skipped");
            continue;
        };
        let id = format!(
            "{domain}-gen-{}",
            &blake3::hash(json.as_bytes()).to_hex()[..12]
        );
        let set = match parse_set(&id, json) {
            Ok(set) => set,
            Err(e) => {
                tracing::warn!(set = i, error = %e, "the generated set does not fit the corpus format; skipped");
                continue;
            }
        };
        let report = lint(
            &Corpus::from_sets(vec![set.clone()])?,
            &LintConfig::default(),
        );
        if !report.passed() {
            tracing::warn!(set = i, report = %serde_json::to_string(&report)?, "the generated set fails the linter; skipped");
            continue;
        }
        let path = out.join(format!("{id}.json"));
        std::fs::write(&path, serde_json::to_vec_pretty(&set)?)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_substitute_every_parameter_and_name_the_domain() {
        for (domain, ..) in DOMAINS {
            let p = prompt(domain).unwrap();
            assert!(
                !p.contains('$'),
                "unsubstituted parameter in the {domain} prompt"
            );
            assert!(p.contains("Typical entities in this domain"));
        }
        assert!(prompt("astrology").is_err());
        assert_eq!(extract_json("```json\n{\"a\": 1}\n```"), Some("{\"a\": 1}"));
        assert_eq!(extract_json("no json"), None);
    }
}
