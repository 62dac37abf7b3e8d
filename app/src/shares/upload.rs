//! The browser half of an upload: XMLHttpRequest, because it reports upload progress (fetch
//! does not). The file is streamed by the browser from disk; nothing is read into memory here.

use std::{cell::RefCell, rc::Rc};

use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use web_sys::{File, FormData, ProgressEvent, XmlHttpRequest};

use super::NewShare;
use crate::error::AppError;

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

fn js_error(e: JsValue) -> String {
    format!("The upload could not start ({}). Reload the page and try again.", e.as_string().unwrap_or_else(|| "browser error".into()))
}

/// Starts the upload: `expires_hours` and `note` first, so the server checks them before the
/// file arrives. `on_progress(sent, total)` runs as bytes go out; `on_done` runs once.
pub fn start(
    file: &File,
    expires_hours: &str,
    note: &str,
    on_progress: impl Fn(f64, f64) + 'static,
    on_done: impl FnOnce(Result<NewShare, UploadError>) + 'static,
) -> Result<XmlHttpRequest, String> {
    let form = FormData::new().map_err(js_error)?;
    form.append_with_str("expires_hours", expires_hours).map_err(js_error)?;
    form.append_with_str("note", note).map_err(js_error)?;
    form.append_with_blob_and_filename("file", file, &file.name()).map_err(js_error)?;

    let xhr = XmlHttpRequest::new().map_err(js_error)?;
    xhr.open("POST", UPLOAD_PATH).map_err(js_error)?;
    xhr.set_request_header("Accept", "application/json").map_err(js_error)?;

    let progress = Closure::<dyn FnMut(ProgressEvent)>::new(move |e: ProgressEvent| {
        if e.length_computable() {
            on_progress(e.loaded(), e.total());
        }
    });
    xhr.upload().map_err(js_error)?.set_onprogress(Some(progress.as_ref().unchecked_ref()));

    // Exactly one of load / error / abort ends the upload; the first one takes `on_done`.
    let done: Rc<RefCell<Option<Box<dyn FnOnce(Result<NewShare, UploadError>)>>>> = Rc::new(RefCell::new(Some(Box::new(on_done))));
    let finish = move |done: &Rc<RefCell<Option<Box<dyn FnOnce(Result<NewShare, UploadError>)>>>>, result| {
        if let Some(f) = done.borrow_mut().take() {
            f(result);
        }
    };
    let (d1, d2, d3, reader) = (done.clone(), done.clone(), done, xhr.clone());
    let onload = Closure::<dyn FnMut()>::new(move || finish(&d1, outcome(&reader)));
    let onerror = Closure::<dyn FnMut()>::new(move || {
        finish(
            &d2,
            Err(UploadError::Other("The upload failed: the connection was lost or refused. Check the file size and your network, then try again.".into())),
        )
    });
    let onabort = Closure::<dyn FnMut()>::new(move || finish(&d3, Err(UploadError::Other("The upload was cancelled; nothing was shared.".into()))));
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

fn outcome(xhr: &XmlHttpRequest) -> Result<NewShare, UploadError> {
    let status = xhr.status().unwrap_or(0);
    let body = xhr.response_text().ok().flatten().unwrap_or_default();
    if status == 201 {
        return serde_json::from_str(&body)
            .map_err(|_| UploadError::Other("The server's answer could not be read. Reload the page to see whether the share was created.".into()));
    }
    match serde_json::from_str::<AppError>(&body) {
        Ok(e) => Err(UploadError::Server(e)),
        Err(_) => Err(UploadError::Other(format!("The upload failed (HTTP {status}). Try again in a moment."))),
    }
}
