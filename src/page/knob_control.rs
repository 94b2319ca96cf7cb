//! Each knob's control: the knobs panel (`crate::panels::knobs`), the
//! lesson's knobs beside the scenario picker and a drill's knobs all build
//! theirs here. A control shows the page's scenario and changes it through
//! `Action::Knob`.

use leptos::prelude::*;

use super::action::Action;
use stampede::scenario::parse_u32;

use super::knob::{knob_bounds, on_off, read, Kind, Knob};

/// How long typing may pause before the page restarts the run; a `change`
/// (Enter, blur, spinner) applies at once.
const TYPING_PAUSE: std::time::Duration = std::time::Duration::from_millis(350);

/// One knob's control, label and help line. A copy placed beside a lesson
/// (`lesson`) gets ids and a `data-control` of its own (`lesson-<name>`),
/// and drives the same scenario. Built once with plain DOM calls (see
/// `crate::dom`): thirty of these as `view!` markup cost the wasm a tenth of
/// its size; one effect per knob keeps the control showing the scenario.
#[component]
pub fn KnobControl(knob: Knob, #[prop(optional)] lesson: bool) -> impl IntoView {
    let page = super::use_page();
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |div| build_knob(&div, knob, page, lesson),
    );
    view! { <div class="knob" node_ref=root></div> }
}

pub(crate) fn build_knob(div: &web_sys::Element, knob: Knob, page: super::Page, lesson: bool) {
    use crate::dom::{el, put, set, text_el, Listeners};
    use wasm_bindgen::JsCast;

    let scenario = page.scenario();
    let value = move || scenario.with(|s| read(s, &knob));
    let apply = move |text: String| {
        page.act(Action::Knob(knob.name, text));
    };
    let (id, control_name) = if lesson {
        (
            format!("lesson-knob-{}", knob.name),
            format!("lesson-{}", knob.name),
        )
    } else {
        (format!("knob-{}", knob.name), knob.name.to_string())
    };
    let help_id = format!("{id}-help");
    let inline = matches!(knob.kind, Kind::Switch | Kind::Pitfall(_));
    let _ = div.class_list().toggle_with_force("inline", inline);
    let label = text_el("label", "knob-label", knob.label);
    set(&label, "for", &id);
    put(div, &label);

    let mut on = Listeners::default();
    let control = match knob.kind {
        Kind::Switch | Kind::Pitfall(_) => {
            let input = el("input", "");
            set(&input, "type", "checkbox");
            set(&input, "role", "switch");
            on.on(&input, "change", move |ev| {
                let checked = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                    .is_some_and(|i| i.checked());
                apply(on_off(checked));
            });
            input
        }
        Kind::Choice(options) => {
            let select = el("select", "");
            for (v, label) in options {
                let o = text_el("option", "", label);
                set(&o, "value", v);
                put(&select, &o);
            }
            on.on(&select, "change", move |ev| {
                if let Some(s) = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
                {
                    apply(s.value());
                }
            });
            select
        }
        Kind::Text(example) => {
            let input = el("input", "");
            set(&input, "type", "text");
            set(&input, "placeholder", example);
            set(&input, "spellcheck", "false");
            set(&input, "autocomplete", "off");
            on.on(&input, "change", move |ev| {
                if let Some(i) = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                {
                    apply(i.value());
                }
            });
            input
        }
        Kind::Count | Kind::Fraction | Kind::Beta => {
            let (min, max, step) = if knob.kind == Kind::Fraction {
                ("0".to_string(), "1".to_string(), "0.05")
            } else if knob.kind == Kind::Beta {
                let max = if knob.name == "key_skew" {
                    stampede::scenario::KEY_SKEW_MAX
                } else {
                    stampede::scenario::XFETCH_BETA_MAX
                };
                ("0".to_string(), stampede::decimal::format(max), "0.1")
            } else {
                let (lo, hi) = knob_bounds(knob.name);
                (lo.to_string(), hi.to_string(), "1")
            };
            let input = el("input", "");
            set(&input, "type", "number");
            let numeric = if knob.kind == Kind::Count {
                "numeric"
            } else {
                "decimal"
            };
            set(&input, "inputmode", numeric);
            set(&input, "min", &min);
            set(&input, "max", &max);
            set(&input, "step", step);
            let pending = StoredValue::new(None::<TimeoutHandle>);
            let cancel = move || {
                if let Some(h) = pending.get_value() {
                    h.clear();
                }
                pending.set_value(None);
            };
            let is_number = move |t: &str| {
                if matches!(knob.kind, Kind::Fraction | Kind::Beta) {
                    stampede::decimal::parse(t).is_some()
                } else {
                    parse_u32(t).is_ok()
                }
            };
            let text_of = |ev: &web_sys::Event| {
                ev.target()
                    .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            };
            on.on(&input, "input", move |ev| {
                let Some(i) = text_of(&ev) else { return };
                let t = i.value();
                if is_number(&t) {
                    cancel();
                    let h = set_timeout_with_handle(move || apply(t), TYPING_PAUSE);
                    pending.set_value(h.ok());
                }
            });
            on.on(&input, "change", move |ev| {
                cancel();
                let Some(i) = text_of(&ev) else { return };
                let t = i.value();
                if is_number(&t) {
                    apply(t);
                } else {
                    // Not a number: show the value in force again.
                    i.set_value(&value());
                }
            });
            input
        }
    };
    set(&control, "id", &id);
    set(&control, "data-control", &control_name);
    set(&control, "aria-describedby", &help_id);
    put(div, &control);
    let help = text_el("p", "knob-help", knob.help);
    set(&help, "id", &help_id);
    put(div, &help);
    // Beside a lesson the help may be tucked away (many knobs in a row):
    // a pointer still reads it.
    if lesson {
        set(div, "title", knob.help);
    }

    // The control shows the scenario, whoever changed it.
    let parts = StoredValue::new_local((control, on));
    crate::dom::effect(move || {
        let v = value();
        parts.with_value(|(c, _)| {
            if let Some(i) = c.dyn_ref::<web_sys::HtmlInputElement>() {
                if i.type_() == "checkbox" {
                    i.set_checked(v == "1");
                } else if i.value() != v {
                    i.set_value(&v);
                }
            } else if let Some(s) = c.dyn_ref::<web_sys::HtmlSelectElement>() {
                if s.value() != v {
                    s.set_value(&v);
                }
            }
        });
    });
}
