use super::*;
use crate::narrative::{Part, Question, ReasoningType};

fn question(text: &str, answer: &str, rt: ReasoningType, at: AnswerType) -> Question {
    Question {
        question: text.into(),
        answer: answer.into(),
        answers: vec![answer.into()],
        reasoning_type: rt,
        answer_type: at,
    }
}

fn shallow_set() -> NarrativeSet {
    let filler = "The laboratory logged routine calibration values of 4.7 and 6.3 and 12 and 19 that morning. ".repeat(30);
    let narrative = format!(
        "{filler}\n\nThe enzyme PFK1 showed a persistent deviation confirmed in three replicate assays. It was assigned to tier \"amber\"."
    );
    let part = Part {
        narrative,
        questions: vec![
            question(
                "Which enzyme showed a persistent deviation in replicate assays?",
                "PFK1",
                ReasoningType::Negation,
                AnswerType::Entity,
            ),
            question(
                "Which tier was the enzyme assigned to?",
                "amber",
                ReasoningType::Conditional,
                AnswerType::Label,
            ),
            question(
                "How many calibration values?",
                "4",
                ReasoningType::Comparison,
                AnswerType::Numeric,
            ),
        ],
    };
    let mut later = part.clone();
    later.narrative = later.narrative.replace("enzyme PFK1", "enzyme seen before");
    NarrativeSet {
        id: "shallow".into(),
        domain: "biochemistry".into(),
        parts: vec![part, later.clone(), later],
    }
}

#[test]
fn keyword_answerable_questions_fail_the_lint() {
    let corpus = Corpus::from_sets(vec![shallow_set()]).unwrap();
    let report = lint(&corpus, &LintConfig::default());
    assert!(!report.passed());
    let first = &report.results[0];
    assert!(!first.solved_by.is_empty(), "{first:?}");
    assert!(
        report
            .issues
            .iter()
            .any(|i| i.message.contains("a script answers it"))
    );
    assert!(report.baseline_success > 0.0);
}

#[test]
fn schema_and_generation_rules_are_checked() {
    let mut set = shallow_set();
    set.parts[0].questions[1].answer = "a very long label beyond twenty".into();
    set.parts[0].questions[2].reasoning_type = ReasoningType::Negation;
    set.parts[1].narrative = "too short, 1 2 3".into();
    set.parts[1].narrative.push_str(" mentions amber");
    set.id = "Bad Id".into();
    let corpus = Corpus::from_sets(vec![set]).unwrap();
    let report = lint(&corpus, &LintConfig::default());
    let messages: Vec<&str> = report.issues.iter().map(|i| i.message.as_str()).collect();
    let has = |needle: &str| messages.iter().any(|m| m.contains(needle));
    assert!(has("longer than 20"), "{messages:#?}");
    assert!(has("share a reasoning type"));
    assert!(has("tokens, outside"));
    assert!(has("numbers in the narrative"));
    assert!(has("the id must be"));
    assert!(has("must refer to it indirectly"));
}

#[test]
fn lint_dir_reports_unparsable_files_as_issues() {
    let dir = std::env::temp_dir().join(format!("hco-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("broken.json"), "{\"domain\": 3}").unwrap();
    std::fs::write(dir.join("ignored.txt"), "not a set").unwrap();
    let report = lint_dir(&dir, &LintConfig::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!report.passed());
    assert_eq!(report.issues[0].set, "broken");
    assert!(lint_dir(Path::new("/nonexistent/hco-corpus"), &LintConfig::default()).is_err());
}
