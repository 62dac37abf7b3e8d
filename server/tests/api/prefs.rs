//! The colour-scheme switch (issue 15): the choice is a cookie the server reads, so the page's
//! first byte already carries it; bad values and other sites are refused.

use crate::helpers::spawn_app;

fn plain_client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_chosen_theme_is_a_cookie_rendered_into_the_html_element(pool: sqlx::PgPool) {
    let app = spawn_app(pool).await;
    let client = plain_client();

    // Hydrated client: JSON answer, cookie set for a year, HttpOnly and SameSite.
    let res = client.post(app.url("/api/prefs/theme")).header("accept", "application/json").form(&[("theme", "dark")]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("ebb_theme=dark;"), "{cookie}");
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=31536000"] {
        assert!(cookie.contains(attr), "{attr} missing: {cookie}");
    }

    // The page is rendered in the chosen scheme, and its switch shows the choice pressed.
    for (value, attr) in [("dark", Some("data-theme=\"dark\"")), ("light", Some("data-theme=\"light\"")), ("bogus", None)] {
        let html = client.get(app.url("/")).header("cookie", format!("ebb_theme={value}")).send().await.unwrap().text().await.unwrap();
        let root = &html[html.find("<html").unwrap()..];
        let root = &root[..root.find('>').unwrap()];
        match attr {
            Some(a) => {
                assert!(root.contains(a), "{root}");
                assert!(html.contains(&format!("value=\"{value}\" aria-pressed=\"true\"")), "the {value} button is pressed");
            }
            None => {
                assert!(!root.contains("data-theme"), "an unknown value follows the system: {root}");
                assert!(html.contains("value=\"auto\" aria-pressed=\"true\""));
            }
        }
    }

    // "auto" removes the cookie.
    let res = client.post(app.url("/api/prefs/theme")).header("accept", "application/json").form(&[("theme", "auto")]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()["set-cookie"].to_str().unwrap().contains("Max-Age=0"));
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_switch_works_without_javascript_and_refuses_bad_values_and_other_sites(pool: sqlx::PgPool) {
    let app = spawn_app(pool).await;
    let client = plain_client();

    // A plain form post (no JavaScript) goes back to the page it came from, with the cookie.
    let res = client
        .post(app.url("/api/prefs/theme"))
        .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .header("referer", app.url("/retention"))
        .form(&[("theme", "light")])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_redirection(), "{}", res.status());
    let location = res.headers()["location"].to_str().unwrap();
    assert_eq!(location, app.url("/retention"));
    assert!(res.headers()["set-cookie"].to_str().unwrap().starts_with("ebb_theme=light;"));

    let res = client.post(app.url("/api/prefs/theme")).header("accept", "application/json").form(&[("theme", "purple")]).send().await.unwrap();
    assert_eq!(res.status(), 400);
    assert!(res.headers().get("set-cookie").is_none());

    let res = client
        .post(app.url("/api/prefs/theme"))
        .header("accept", "application/json")
        .header("origin", "https://evil.example")
        .form(&[("theme", "dark")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert!(res.headers().get("set-cookie").is_none());
    app.shutdown().await;
}

/// The `<html>` start tag of a page.
fn root_tag(html: &str) -> &str {
    let root = &html[html.find("<html").unwrap()..];
    &root[..root.find('>').unwrap()]
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_language_comes_from_the_cookie_else_accept_language_else_english(pool: sqlx::PgPool) {
    let app = spawn_app(pool).await;
    let client = plain_client();
    let page = |accept: Option<&'static str>, cookie: Option<&'static str>| {
        let mut req = client.get(app.url("/"));
        if let Some(a) = accept {
            req = req.header("accept-language", a);
        }
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    for (accept, cookie, lang, heading) in [
        (None, None, "en", "Get in touch"),
        (Some("ja-JP,ja;q=0.9,en;q=0.8"), None, "ja", "お問い合わせ"),
        (Some("fr-FR, de;q=0.9"), None, "en", "Get in touch"),
        (Some("fr, ja;q=0.5, en;q=0.3"), None, "ja", "お問い合わせ"),
        (Some("ja"), Some("ebb_lang=en"), "en", "Get in touch"),
        (None, Some("ebb_lang=ja"), "ja", "お問い合わせ"),
        (Some("ja"), Some("ebb_lang=xx"), "ja", "お問い合わせ"),
    ] {
        let html = page(accept, cookie).await;
        assert!(root_tag(&html).contains(&format!("lang=\"{lang}\"")), "{accept:?} {cookie:?}: {}", root_tag(&html));
        assert!(html.contains(&format!("<h1>{heading}</h1>")), "{accept:?} {cookie:?}: no {heading}");
    }

    // The server's validation answers in the request's language.
    let res = client
        .post(app.url("/api/contact"))
        .header("accept", "application/json")
        .header("accept-language", "ja")
        .form(&[("name", "山田"), ("email", "nope"), ("message", "こんにちは")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let body = res.text().await.unwrap();
    assert!(body.contains("name@example.org のような正しいメールアドレスを入力してください。"), "{body}");

    // The switch's cookie; an unknown language is refused.
    let res = client.post(app.url("/api/prefs/lang")).header("accept", "application/json").form(&[("lang", "ja")]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("ebb_lang=ja;") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
    let res = client.post(app.url("/api/prefs/lang")).header("accept", "application/json").form(&[("lang", "de")]).send().await.unwrap();
    assert_eq!(res.status(), 400);
    app.shutdown().await;
}
