//! "Write it yourself" (`?assemble=1`, issue 39 §3): the read path's
//! blocks, shuffled; the learner puts them in order and picks how each is
//! written (buttons: keyboard and pointer alike), runs it, and the fleet
//! runs the three storms; each storm's grade and its sentence (claims
//! checked on that storm's run), then the assembly as code in the picked
//! language. The blocks, storms and grades are the catalogue's
//! (`catalogue::assemble`); the state is the page's (`page::assembly`),
//! changed through `Page::act`. Built with plain DOM calls, like the drills.

use catalogue::assemble::{self, Assembly, BLOCKS};
use catalogue::examples::{self, EXAMPLES};
use wasm_bindgen::JsCast;
use web_sys::Element;

use crate::dom::{button, el, put, set, set_text, text_el, Listeners};
use crate::page::action::Action;
use crate::page::assembly::Edit;

/// The link's `assemble=` text, if it asks for "Write it yourself".
pub fn wanted(query: &str) -> Option<String> {
    query.trim_start_matches('?').split('&').find_map(|part| {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        (k == "assemble").then(|| stampede::scenario::percent_decode(v))
    })
}

/// Opens "Write it yourself" from the link's text and builds its view
/// before the sandbox's `main`.
pub fn mount(text: String, parts: &crate::dom::Parts) {
    let page = crate::page::use_page();
    page.act(Action::Assemble(Edit::Open {
        text,
        seed: page.seed().get_untracked(),
    }));
    let root = el("section", "panel assemble");
    set(&root, "data-assemble", "");
    set(&root, "aria-labelledby", "assemble-title");
    if let Some(parent) = parts.main.parent_node() {
        let _ = parent.insert_before(&root, Some(&parts.main));
    }
    let title = text_el("h2", "tour-title", "Write it yourself");
    set(&title, "id", "assemble-title");
    put(&root, &title);
    let fleet = assemble::Storm::Burst.scenario();
    put(
        &root,
        &text_el(
            "p",
            "tour-text",
            &format!(
                "The read path's blocks are shuffled, and some are written wrong. Put them in \
                 the card's order with the arrows, pick how each one is written, then run it: \
                 a fleet of {} offices with {} clerks each runs your read path through three \
                 storms.",
                fleet.instances, fleet.threads
            ),
        ),
    );
    // With the card beside, or on one's own: the card, the code and the
    // order's hint hidden until the first run.
    let modes = el("div", "assemble-modes");
    set(&modes, "role", "group");
    set(&modes, "aria-label", "How much to show");
    for (own, label) in [(false, "With the card beside"), (true, "On your own")] {
        let b = button("assemble-mode", label);
        set(&b, "data-act", "mode");
        set(&b, "data-own", if own { "true" } else { "false" });
        put(&modes, &b);
    }
    put(&root, &modes);
    let hidden_note = text_el(
        "p",
        "assemble-hidden-note",
        "On your own: the card, the code in every language and the order's hint stay hidden until you run your read path.",
    );
    set(&hidden_note, "data-code-hidden", "");
    put(&root, &hidden_note);
    let notice = el("p", "assemble-notice");
    set(&notice, "role", "status");
    put(&root, &notice);
    let blocks = el("ol", "assemble-blocks");
    put(&root, &blocks);
    let order = el("p", "assemble-order");
    put(&root, &order);
    let run = button("assemble-run", "Run it through the storms");
    set(&run, "data-act", "run");
    put(&root, &run);
    let grades = el("ul", "assemble-grades");
    set(&grades, "aria-live", "polite");
    put(&root, &grades);
    let code_box = el("div", "assemble-code");
    put(&root, &code_box);
    let langs = el("div", "assemble-langs");
    set(&langs, "role", "group");
    set(&langs, "aria-label", "Language");
    for e in &EXAMPLES {
        let b = button("assemble-language", e.label);
        set(&b, "data-act", "lang");
        set(&b, "data-language", e.name);
        put(&langs, &b);
    }
    put(
        &code_box,
        &text_el("h3", "drill-h", "Your read path, as code"),
    );
    put(&code_box, &langs);
    let path = el("p", "assemble-path");
    put(&code_box, &path);
    let pre = el("pre", "assemble-listing");
    set(&pre, "data-assemble-code", "");
    set(&pre, "tabindex", "0");
    put(&code_box, &pre);

    keep_clear_of_the_tabs(&root);

    // One listener for every button, by its data-act.
    let mut on = Listeners::default();
    let focus_next: std::rc::Rc<std::cell::RefCell<Option<String>>> = Default::default();
    {
        let focus_next = focus_next.clone();
        let notice = notice.clone();
        on.on(&root, "click", move |ev| {
            let Some(b) = ev
                .target()
                .and_then(|t| t.dyn_into::<Element>().ok())
                .and_then(|t| t.closest("button[data-act]").ok().flatten())
            else {
                return;
            };
            let num = |name: &str| {
                b.get_attribute(name)
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(usize::MAX)
            };
            let edit = match b.get_attribute("data-act").as_deref() {
                Some(dir @ ("up" | "down")) => {
                    let at = num("data-at");
                    let up = dir == "up";
                    // The moved block keeps the focus, on the same arrow.
                    let id = b.get_attribute("data-for").unwrap_or_default();
                    *focus_next.borrow_mut() = Some(format!("{id}:{dir}"));
                    Edit::Move { at, up }
                }
                Some("pick") => Edit::Pick {
                    block: num("data-block-index"),
                    variant: num("data-variant-index"),
                },
                Some("run") => Edit::Run {
                    seed: page.seed().get_untracked(),
                },
                Some("mode") => Edit::Own(b.get_attribute("data-own").as_deref() == Some("true")),
                Some("lang") => {
                    let name = b.get_attribute("data-language").unwrap_or_default();
                    if let Some(e) = examples::example(&name) {
                        page.act(Action::Language(Some(e.name)));
                    }
                    return;
                }
                _ => return,
            };
            if let crate::page::action::Acted::Refused(why) = page.act(Action::Assemble(edit)) {
                set_text(&notice, &why);
            }
        });
    }
    let listeners = std::rc::Rc::new(on);

    crate::dom::effect(move || {
        let _keep = &listeners;
        let lang = page.language().get();
        let example = lang.and_then(examples::example).unwrap_or(&EXAMPLES[0]);
        page.assembling().with(|st| {
            let Some(st) = st else {
                return;
            };
            set_text(&notice, &st.notices.join("; "));
            draw_blocks(&blocks, &st.assembly);
            if let Some(want) = focus_next.borrow_mut().take() {
                if let Some((id, dir)) = want.split_once(':') {
                    focus(&blocks, id, dir);
                }
            }
            let hides = st.hides_code();
            for b in children(&modes) {
                let own = b.get_attribute("data-own").as_deref() == Some("true");
                set(&b, "aria-pressed", if own == st.own { "true" } else { "false" });
            }
            let _ = hidden_note.toggle_attribute_with_force("hidden", !hides);
            let _ = order.toggle_attribute_with_force("hidden", hides);
            set_text(
                &order,
                &match st.assembly.misplaced() {
                    Some((put, after)) => format!(
                        "Not yet in the card's order: \u{201c}{}\u{201d} comes before \u{201c}{}\u{201d}.",
                        put.title, after.title
                    ),
                    None => "In the card's order.".into(),
                },
            );
            draw_grades(&grades, &st.graded);
            let ran = !st.graded.is_empty();
            let _ = code_box.toggle_attribute_with_force("hidden", !ran);
            for b in children(&langs) {
                let on = b.get_attribute("data-language").as_deref() == Some(example.name);
                set(&b, "aria-pressed", if on { "true" } else { "false" });
            }
            set(&pre, "data-language", example.name);
            set_text(&path, example.path);
            if ran {
                set_text(&pre, &st.assembly.code(example));
            }
        });
    });
}

/// A phone's Fleet / Code switch floats over the foot of the screen
/// (style/code.css): while "Write it yourself" reaches down there, the
/// switch steps aside (body class `assemble-under-tabs`) instead of
/// covering its blocks. Checked on scroll and resize; mounted once for the
/// page's life.
fn keep_clear_of_the_tabs(root: &Element) {
    use wasm_bindgen::closure::Closure;
    // The strip the switch floats in (its height and margin, css px).
    const STRIP: f64 = 64.0;
    let root = root.clone();
    let check = Closure::<dyn FnMut()>::new(move || {
        let h = crate::web::window()
            .inner_height()
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0);
        let r = root.get_bounding_client_rect();
        let under = r.height() > 0.0 && r.top() < h && r.bottom() > h - STRIP;
        if let Some(b) = crate::web::document().body() {
            if b.class_list().contains("assemble-under-tabs") != under {
                let _ = b
                    .class_list()
                    .toggle_with_force("assemble-under-tabs", under);
            }
        }
    });
    let w = crate::web::window();
    for ev in ["scroll", "resize"] {
        let _ = w.add_event_listener_with_callback(ev, check.as_ref().unchecked_ref());
    }
    // Once now, after this task lays the section out.
    let f: js_sys::Function = check.as_ref().unchecked_ref::<js_sys::Function>().clone();
    crate::dom::task(Box::new(move || {
        let _ = f.call0(&wasm_bindgen::JsValue::NULL);
    }));
    check.forget();
}

fn children(e: &Element) -> Vec<Element> {
    let list = e.children();
    (0..list.length()).filter_map(|i| list.item(i)).collect()
}

fn focus(blocks: &Element, id: &str, dir: &str) {
    let sel = format!("[data-block=\"{id}\"] button[data-act=\"{dir}\"]");
    let Ok(Some(b)) = blocks.query_selector(&sel) else {
        return;
    };
    // At the end of the list the arrow is disabled: the other one instead.
    let b = if b.has_attribute("disabled") {
        let other = if dir == "up" { "down" } else { "up" };
        let sel = format!("[data-block=\"{id}\"] button[data-act=\"{other}\"]");
        match blocks.query_selector(&sel) {
            Ok(Some(o)) => o,
            _ => b,
        }
    } else {
        b
    };
    if let Some(h) = b.dyn_ref::<web_sys::HtmlElement>() {
        let _ = h.focus();
    }
}

/// The blocks in the learner's order, drawn anew.
fn draw_blocks(ol: &Element, a: &Assembly) {
    ol.set_text_content(None);
    let n = a.picks.len();
    for (at, &(b, picked)) in a.picks.iter().enumerate() {
        let block = &BLOCKS[b];
        let li = el("li", "assemble-block");
        set(&li, "data-block", block.id);
        set(&li, "data-variant", block.variants[picked].id);
        let head = el("div", "assemble-head");
        put(&head, &text_el("span", "assemble-title", block.title));
        for (dir, glyph, can) in [("up", "\u{2191}", at > 0), ("down", "\u{2193}", at + 1 < n)] {
            let m = button("assemble-move", glyph);
            set(&m, "data-act", dir);
            set(&m, "data-at", &at.to_string());
            set(&m, "data-for", block.id);
            set(
                &m,
                "aria-label",
                &format!("Move \u{201c}{}\u{201d} {dir}", block.title),
            );
            if !can {
                set(&m, "disabled", "");
            }
            put(&head, &m);
        }
        put(&li, &head);
        if block.variants.len() > 1 {
            let group = el("div", "assemble-variants");
            set(&group, "role", "group");
            set(
                &group,
                "aria-label",
                &format!("How to write \u{201c}{}\u{201d}", block.title),
            );
            for (vi, v) in block.variants.iter().enumerate() {
                let pick = button("assemble-pick", v.label);
                set(&pick, "data-act", "pick");
                set(&pick, "data-block-index", &b.to_string());
                set(&pick, "data-variant-index", &vi.to_string());
                set(&pick, "data-pick", v.id);
                set(
                    &pick,
                    "aria-pressed",
                    if vi == picked { "true" } else { "false" },
                );
                put(&group, &pick);
            }
            put(&li, &group);
        } else {
            put(&li, &text_el("p", "assemble-only", block.variants[0].label));
        }
        put(ol, &li);
    }
}

/// Each storm's grade and what the learner's version did in it.
fn draw_grades(ul: &Element, graded: &[assemble::Graded]) {
    ul.set_text_content(None);
    for g in graded {
        let li = el("li", "assemble-grade");
        set(&li, "data-storm", g.storm.id());
        set(&li, "data-grade", if g.pass { "pass" } else { "fail" });
        let head = el("p", "assemble-storm");
        put(&head, &text_el("strong", "", g.storm.title()));
        put(
            &head,
            &text_el(
                "span",
                "assemble-verdict",
                if g.pass {
                    " \u{2713} passed"
                } else {
                    " \u{2717} failed"
                },
            ),
        );
        put(&li, &head);
        put(&li, &text_el("p", "assemble-said", &assemble::sentence(g)));
        put(ul, &li);
    }
}
