//! The browser half of an upload: XMLHttpRequest, because it reports upload progress (fetch
//! does not). The file is streamed by the browser from disk; nothing is read into memory here.

use std::{cell::RefCell, rc::Rc};

use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use web_sys::{File, FormData, ProgressEvent, XmlHttpRequest};

use super::texts::SharesT;
use super::NewShare;
use common::error::AppError;
use common::i18n::{fill, Lang, Text};

/// Where the server receives uploads (behind the admin gate).
const UPLOAD_PATH: &str = "/api/admin/shares/upload";

/// Why an upload did not create a share.
#[derive(Debug, Clone)]
pub enum UploadError {
    /// The server refused it (the same errors as server functions).
    Server(AppError),
    /// The connection failed or the upload was cancelled.
    Other(String),
}

/// Why the upload could not start, in `lang`.
fn start_error(lang: Lang) -> impl Fn(JsValue) -> String + Copy {
    move |e: JsValue| {
        let cause = e.as_string().unwrap_or_else(|| SharesT::BrowserError.get(lang).into());
        fill(SharesT::UploadNotStarted.get(lang), &[("cause", &cause)])
    }
}

/// Starts the upload: `expires_hours`, `max_downloads` and `note` first, so the server checks
/// them before the file arrives. `on_progress(sent, total)` runs as bytes go out; `on_done` runs
/// once.
pub fn start(
    file: &File,
    fields: &[(&str, &str)],
    on_progress: impl Fn(f64, f64) + 'static,
    on_done: impl FnOnce(Result<NewShare, UploadError>) + 'static,
) -> Result<XmlHttpRequest, String> {
    send(UPLOAD_PATH, file, fields, on_progress, on_done)
}

/// Sends `fields`, then `file`, as a multipart form to `path`; the answer (201) is read as `R`.
pub fn send<R: serde::de::DeserializeOwned + 'static>(
    path: &str,
    file: &File,
    fields: &[(&str, &str)],
    on_progress: impl Fn(f64, f64) + 'static,
    on_done: impl FnOnce(Result<R, UploadError>) + 'static,
) -> Result<XmlHttpRequest, String> {
    // The language is read now, in the form's context: the request's callbacks run outside it.
    let lang = common::i18n::lang();
    let js_error = start_error(lang);
    let form = FormData::new().map_err(js_error)?;
    for (name, value) in fields {
        form.append_with_str(name, value).map_err(js_error)?;
    }
    form.append_with_blob_and_filename("file", file, &file.name()).map_err(js_error)?;

    let xhr = XmlHttpRequest::new().map_err(js_error)?;
    xhr.open("POST", path).map_err(js_error)?;
    xhr.set_request_header("Accept", "application/json").map_err(js_error)?;

    let progress = Closure::<dyn FnMut(ProgressEvent)>::new(move |e: ProgressEvent| {
        if e.length_computable() {
            on_progress(e.loaded(), e.total());
        }
    });
    xhr.upload().map_err(js_error)?.set_onprogress(Some(progress.as_ref().unchecked_ref()));

    // Exactly one of load / error / abort ends the upload; the first one takes `on_done`.
    type Done<R> = Rc<RefCell<Option<Box<dyn FnOnce(Result<R, UploadError>)>>>>;
    let done: Done<R> = Rc::new(RefCell::new(Some(Box::new(on_done))));
    let finish = move |done: &Done<R>, result| {
        if let Some(f) = done.borrow_mut().take() {
            f(result);
        }
    };
    let (d1, d2, d3, reader) = (done.clone(), done.clone(), done, xhr.clone());
    let onload = Closure::<dyn FnMut()>::new(move || finish(&d1, outcome(&reader, lang)));
    let onerror = Closure::<dyn FnMut()>::new(move || finish(&d2, Err(UploadError::Other(SharesT::UploadConnection.get(lang).into()))));
    let onabort = Closure::<dyn FnMut()>::new(move || finish(&d3, Err(UploadError::Other(SharesT::UploadCancelled.get(lang).into()))));
    xhr.set_onload(Some(onload.as_ref().unchecked_ref()));
    xhr.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    xhr.set_onabort(Some(onabort.as_ref().unchecked_ref()));
    // The request owns its handlers for its whole life; a few closures per upload are leaked.
    progress.forget();
    onload.forget();
    onerror.forget();
    onabort.forget();

    xhr.send_with_opt_form_data(Some(&form)).map_err(js_error)?;
    Ok(xhr)
}

fn outcome<R: serde::de::DeserializeOwned>(xhr: &XmlHttpRequest, lang: Lang) -> Result<R, UploadError> {
    let status = xhr.status().unwrap_or(0);
    let body = xhr.response_text().ok().flatten().unwrap_or_default();
    if status == 201 {
        return serde_json::from_str(&body).map_err(|_| UploadError::Other(SharesT::UploadUnreadable.get(lang).into()));
    }
    match serde_json::from_str::<AppError>(&body) {
        Ok(e) => Err(UploadError::Server(e)),
        Err(_) => Err(UploadError::Other(fill(SharesT::UploadHttp.get(lang), &[("status", &status)]))),
    }
}
