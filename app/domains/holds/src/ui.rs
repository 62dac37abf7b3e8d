//! Hold controls: the form that places a hold (on an inquiry, its sender, or a share) and the
//! list of holds with their Lift buttons.

use leptos::prelude::*;

use super::api::{list_holds, LiftHold, PlaceHold};
use super::texts::HoldsT;
use super::{parse_reason, HoldTarget, HoldView};
use common::error::AppError;
use common::i18n::{num, t, tf};
use common::time::format_time;
use common::ui::{describe, Loaded, Outcome};

fn describe_hold(err: &AppError) -> String {
    match err {
        AppError::NotFound => t(HoldsT::NoLongerExists).into(),
        AppError::Invalid(fields) => fields.get("reason").cloned().unwrap_or_else(|| describe(err)),
        other => describe(other),
    }
}

/// The form as the pages get it from their context (see `common::holds::HoldFormSlot`).
pub fn hold_form_view(id: String, choices: Vec<(&'static str, HoldTarget)>, on_placed: Callback<()>) -> AnyView {
    view! { <HoldForm id choices on_placed/> }.into_any()
}

/// A reason field and one button per choice (`(label, target)`); `on_placed` runs after a hold
/// was placed. `id` makes the field's id unique on the page.
#[component]
pub fn HoldForm(id: String, choices: Vec<(&'static str, HoldTarget)>, #[prop(into)] on_placed: Callback<()>) -> impl IntoView {
    let reason = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let message = RwSignal::new(None::<Result<String, String>>);
    let field_id = format!("hold-reason-{id}");
    let error_id = format!("hold-reason-error-{id}");
    // Placing goes through the server function's action: pending while it runs, its value says
    // how it went.
    let action = ServerAction::<PlaceHold>::new();
    Effect::new(move |_| match action.value().get() {
        Some(Ok(_)) => {
            reason.set(String::new());
            message.set(Some(Ok(t(HoldsT::Placed).into())));
            on_placed.run(());
        }
        Some(Err(e)) => message.set(Some(Err(describe_hold(&e)))),
        None => {}
    });
    let place = move |target: HoldTarget| {
        let typed = reason.get_untracked();
        match parse_reason(&typed) {
            Err(m) => error.set(Some(m)),
            Ok(_) => {
                error.set(None);
                action.dispatch(PlaceHold { target, reason: typed });
            }
        }
    };
    let error_ref = error_id.clone();
    view! {
        <div class="hold-form" data-testid="hold-form">
            <label for=field_id.clone()>{t(HoldsT::ReasonLabel)}</label>
            <input id=field_id type="text" maxlength="256" data-testid="hold-reason"
                placeholder=t(HoldsT::ReasonPlaceholder)
                aria-invalid=move || if error.get().is_some() { "true" } else { "false" }
                aria-describedby=error_ref
                prop:value=reason on:input=move |ev| reason.set(event_target_value(&ev))/>
            <p id=error_id class="field-error" aria-live="polite">{move || error.get()}</p>
            <div class="inline tight">
                {choices.into_iter().map(|(label, target)| view! {
                    <button type="button" class="secondary small" disabled=move || action.pending().get() on:click=move |_| place(target)>{label}</button>
                }).collect_view()}
            </div>
            <Outcome message testid="hold-message"/>
        </div>
    }
}

/// Every hold in force, with a Lift button each.
#[component]
pub fn HoldsList(#[prop(into)] on_change: Callback<()>) -> impl IntoView {
    let reload = RwSignal::new(0u32);
    let holds = Resource::new(move || reload.get(), |_| list_holds());
    let message = RwSignal::new(None::<Result<String, String>>);
    let action = ServerAction::<LiftHold>::new();
    let lifting = RwSignal::new(String::new());
    Effect::new(move |_| match action.value().get() {
        Some(Ok(())) => {
            message.set(Some(Ok(tf(HoldsT::Lifted, &[("what", &lifting.get_untracked())]))));
            reload.update(|n| *n += 1);
            on_change.run(());
        }
        Some(Err(e)) => message.set(Some(Err(describe_hold(&e)))),
        None => {}
    });
    let lift = move |h: HoldView| {
        #[cfg(feature = "hydrate")]
        {
            let question = tf(HoldsT::LiftQuestion, &[("what", &h.item.describe())]);
            if !common::ui::confirmed(&question) {
                return;
            }
        }
        lifting.set(h.item.describe());
        action.dispatch(LiftHold { id: h.id.into() });
    };
    view! {
        <Outcome message testid="holds-message"/>
        <Loaded value=move || holds.get() describe=describe ok=move |v| match v {
            list if list.is_empty() => view! { <p class="empty" data-testid="no-holds">{t(HoldsT::NoHolds)}</p> }.into_any(),
            list => view! {
                <table class="list" data-testid="holds">
                    <thead><tr><th>{t(HoldsT::Keeps)}</th><th>{t(HoldsT::Reason)}</th><th>{t(HoldsT::PlacedAt)}</th><th><span class="sr-only">{t(HoldsT::Actions)}</span></th></tr></thead>
                    <tbody>
                        {list.into_iter().map(|h| {
                            let what = h.item.describe();
                            let covers = h.covers;
                            let placed = format!("{}{}", format_time(h.placed_at), h.placed_by.as_deref().map(|n| tf(HoldsT::PlacedBy, &[("name", &n)])).unwrap_or_default());
                            let label = tf(HoldsT::LiftLabel, &[("what", &what)]);
                            let reason = h.reason.clone();
                            view! {
                                <tr data-testid="hold-row">
                                    <td>{what}<div class="muted">{if covers == 1 { t(HoldsT::OneItemKept).to_string() } else { tf(HoldsT::ItemsKept, &[("n", &num(covers))]) }}</div></td>
                                    <td>{reason}</td>
                                    <td class="nowrap">{placed}</td>
                                    <td class="actions"><button type="button" class="secondary small" aria-label=label on:click=move |_| lift(h.clone())>{t(HoldsT::Lift)}</button></td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any(),
        }/>
    }
}
