//! The page a person uses each window, served at `/` with its scripts under `/static/`. Plain
//! HTML, CSS and JavaScript compiled into the binary: nothing is fetched from elsewhere, and the
//! content security policy allows only this origin (and `data:` images for the PNG prompts).

use axum::extract::Path;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::ApiError;

/// The page's files: name, media type, contents.
const ASSETS: &[(&str, &str, &str)] = &[
    ("app.js", JS, include_str!("../../web/app.js")),
    ("protocol.js", JS, include_str!("../../web/protocol.js")),
    ("blake3.js", JS, include_str!("../../web/blake3.js")),
    ("families.js", JS, include_str!("../../web/families.js")),
    ("passkey.js", JS, include_str!("../../web/passkey.js")),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../web/style.css"),
    ),
];

const JS: &str = "text/javascript; charset=utf-8";
const INDEX: &str = include_str!("../../web/index.html");
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn serve(media_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, media_type),
        (header::CACHE_CONTROL, "no-cache"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CONTENT_SECURITY_POLICY, CSP),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// `GET /`: the page.
pub async fn index() -> Response {
    serve("text/html; charset=utf-8", INDEX)
}

/// `GET /static/{file}`: one of the page's files.
pub async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, media_type, body)) => serve(media_type, body),
        None => {
            ApiError::new("not_found", format!("the page has no file `{file}`")).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_the_page_loads_is_served() {
        let mut wanted: Vec<&str> = INDEX
            .split("/static/")
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap_or_default())
            .collect();
        for (_, _, body) in ASSETS {
            for import in body.split("from './").skip(1) {
                wanted.push(import.split('\'').next().unwrap_or_default());
            }
        }
        assert!(wanted.len() >= 5, "{wanted:?}");
        for file in wanted {
            assert!(
                ASSETS.iter().any(|(name, _, _)| *name == file),
                "{file} is loaded by the page but not served"
            );
        }
    }

    #[test]
    fn the_page_names_no_other_origin() {
        for body in std::iter::once(INDEX).chain(ASSETS.iter().map(|(_, _, b)| *b)) {
            assert!(!body.contains("http://") && !body.contains("https://"));
        }
    }
}
