"""Compare strategies (leads): simulate active learning on the project's gold data in the
background, follow it live, and pick the query strategy from F1-vs-words curves."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from cwal.simulate import DEFAULT_SEEDS, MODES, band, recommend, strategies_for, summarize
from cwal.simulate.intervals import display_costs, word_costs
from cwal.simulate.summary import X_AXES, display_table
from db import simulations as sims
from ui import auth, charts, forms, state, tables
from ui.safe import md

MODE_NAMES = {"online": "learns online", "retrain": "retrains at each evaluation"}

lead, project = auth.require_project_lead()
st.title("Compare strategies")
if project is None:
    st.info("There is no project yet: create one on the Projects page.")
    st.stop()
st.caption(f"{md(project.name)} · current strategy: {md(project.settings['strategy'])}")
engine = state.engine()
n_pool, n_eval = sims.gold_counts(engine, project.id)
found = sims.experiments(engine, project.id)


if (n_pool < 60 or n_eval < 1) and not found:
    st.info(
        f"A comparison replays gold answers, and this project has {n_pool:,} gold pool sentences "
        f"and {n_eval:,} gold evaluation sentences (it needs 60+ and 1+). On **Add files**, "
        "import a labeled file with its tags kept as gold, into the pool and into the evaluation "
        "split; the simulation then ranks with the same code as the live queue."
    )
    st.stop()
with st.expander("New comparison", expanded=not found):
    st.write(f"Gold data: {n_pool:,} pool sentences with gold tags, {n_eval:,} for evaluation.")
    with st.form("new_comparison"):
        name = st.text_input("Name", value="strategy comparison", max_chars=200)
        offered = strategies_for(project.settings["learner"])
        chosen = st.multiselect("Strategies", offered, default=offered)
        cols = st.columns(3)
        seeds = cols[0].number_input("Seeds", 1, 10, len(DEFAULT_SEEDS))
        top = max(60, n_pool)
        budget = cols[1].number_input("Budget (sentences)", 60, top, min(2000, top))
        mode = cols[2].selectbox("Learner", MODES, format_func=MODE_NAMES.get)
        go = st.form_submit_button("Start in the background", type="primary")
    if go and (n_pool < 60 or n_eval < 1 or not chosen or not name.strip()):
        st.error("Needs a name, a strategy, 60+ gold pool sentences and gold evaluation data.")
    elif go:
        settings = {"strategies": tuple(chosen), "seeds": tuple(range(int(seeds))),
                    "budget": int(budget), "mode": mode}  # fmt: skip
        st.session_state["cw_compare"] = state.service().start_comparison(
            lead, project.id, None, name, **settings
        )
        st.rerun()

if not found:
    st.stop()
keys = [e.key for e in found]
label = {e.key: f"{e.name} · {e.created_at:%Y-%m-%d %H:%M} · {e.status}" for e in found}
current = st.session_state.get("cw_compare")
index = keys.index(current) if current in keys else 0
key = st.selectbox("Comparison", keys, index=index, format_func=label.get)
st.session_state["cw_compare"] = key
running = sims.is_running(key)


@st.fragment(run_every=2.0 if running else None)
def live() -> None:
    auth.require_project_lead()  # a fragment re-run skips the page's own check
    exp = sims.get_experiment(engine, key)
    if exp.status != "done":
        done, alive = sims.experiment_progress(engine, exp), sims.is_running(key)
        st.progress(done, text=f"{100 * done:.0f}% done · {'running' if alive else 'stopped'}")
        if running and not alive:
            st.rerun(scope="app")
        if not alive and st.button("Resume"):
            state.service().start_comparison(lead, project.id, key)
            st.rerun(scope="app")
    curves = sims.experiment_curves(engine, exp)
    table = summarize(curves)
    if table.empty:
        return
    axis = st.radio("x axis", list(X_AXES), format_func=X_AXES.get, horizontal=True)
    charts.show(charts.strategy_curves(band(curves, x=axis), X_AXES[axis]), curves, "comparison")
    full = table["full_f1"].mean()
    ref = f"; the learner trained on the whole pool: F1 {100 * full:.1f}%" if pd.notna(full) else ""
    st.caption(f"Lines: mean over seeds, bands: seed range; {MODE_NAMES[exp.config.mode]}{ref}.")
    tables.show(display_table(table))
    st.dataframe(display_costs(word_costs(curves)))  # x Random's words, seed-bootstrap intervals
    if exp.status != "done":
        st.caption("Partial results: the pick comes when every run is finished.")
        return
    pick, why = recommend(table)
    st.success(f"Pick **{md(pick)}**: {md(why)}.")
    servable = [s for s in forms.strategy_names() if s in table.index]
    if not servable:
        return
    use = st.selectbox("Strategy for this project", servable,
                       index=servable.index(pick) if pick in servable else 0)  # fmt: skip
    if pick not in servable:
        st.caption(f"Annotation serves only {md(', '.join(forms.strategy_names()))}.")
    if st.button("Use for this project"):
        state.service().update_settings(lead, project.id, {"strategy": use})
        st.success(f"The project now uses {md(use)}.")


live()
