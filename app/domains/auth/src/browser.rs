//! The browser half of the WebAuthn ceremonies (hydrated client only).

use super::AuthT;
use common::i18n::t;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use webauthn_rs_proto::{CreationChallengeResponse, PublicKeyCredential, RegisterPublicKeyCredential, RequestChallengeResponse};

/// A message a person can act on, from a WebAuthn DOMException.
fn explain(err: wasm_bindgen::JsValue) -> String {
    let name = err.dyn_ref::<js_sys::Error>().map(|e| String::from(e.name())).unwrap_or_default();
    let key = match name.as_str() {
        "NotAllowedError" => AuthT::PromptClosed,
        "InvalidStateError" => AuthT::AlreadyRegistered,
        "SecurityError" => AuthT::WrongAddress,
        "NotSupportedError" => AuthT::NoPasskeySupport,
        _ => AuthT::PasskeyFailed,
    };
    t(key).into()
}

fn credentials() -> Result<web_sys::CredentialsContainer, String> {
    web_sys::window().map(|w| w.navigator().credentials()).ok_or_else(|| t(AuthT::NeedsWindow).to_string())
}

/// Asks the authenticator to create a passkey.
pub async fn create_passkey(ccr: CreationChallengeResponse) -> Result<RegisterPublicKeyCredential, String> {
    let options: web_sys::CredentialCreationOptions = ccr.into();
    let promise = credentials()?.create_with_options(&options).map_err(explain)?;
    let credential = JsFuture::from(promise).await.map_err(explain)?;
    Ok(RegisterPublicKeyCredential::from(web_sys::PublicKeyCredential::from(credential)))
}

/// Asks the authenticator for an assertion with any passkey of this site.
pub async fn use_passkey(rcr: RequestChallengeResponse) -> Result<PublicKeyCredential, String> {
    let options: web_sys::CredentialRequestOptions = rcr.into();
    let promise = credentials()?.get_with_options(&options).map_err(explain)?;
    let credential = JsFuture::from(promise).await.map_err(explain)?;
    Ok(PublicKeyCredential::from(web_sys::PublicKeyCredential::from(credential)))
}

/// Whether the browser offers passkeys in form autofill (WebAuthn conditional mediation).
pub async fn conditional_mediation_available() -> bool {
    use wasm_bindgen::JsValue;
    let Some(window) = web_sys::window() else { return false };
    let pkc = js_sys::Reflect::get(&window, &JsValue::from_str("PublicKeyCredential")).unwrap_or(JsValue::UNDEFINED);
    if pkc.is_undefined() {
        return false;
    }
    let check = js_sys::Reflect::get(&pkc, &JsValue::from_str("isConditionalMediationAvailable")).ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    let Some(promise) = check.and_then(|f| f.call0(&pkc).ok()).and_then(|p| p.dyn_into::<js_sys::Promise>().ok()) else {
        return false;
    };
    JsFuture::from(promise).await.ok().and_then(|v| v.as_bool()).unwrap_or(false)
}

/// Starts an autofill (conditional) request that `signal` can abort; returns its promise.
pub fn start_conditional(rcr: RequestChallengeResponse, signal: &web_sys::AbortSignal) -> Result<js_sys::Promise, String> {
    let options: web_sys::CredentialRequestOptions = rcr.into();
    options.set_signal(signal);
    credentials()?.get_with_options(&options).map_err(explain)
}

/// Waits for a pending request started by [`start_conditional`].
pub async fn finish_conditional(promise: js_sys::Promise) -> Result<PublicKeyCredential, wasm_bindgen::JsValue> {
    let credential = JsFuture::from(promise).await?;
    Ok(PublicKeyCredential::from(web_sys::PublicKeyCredential::from(credential)))
}
