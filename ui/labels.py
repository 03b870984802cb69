"""The Files & settings part where a lead configures the entity types of a running project:
order, colour, key, name, new types, and deleting a type (its spans merged into another type or
dropped to O, asked first when labels use it). Every change is logged (``repo.label_changes``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from db import repository as repo
from ui import auth, state
from ui.safe import md

_DROP_LABEL = "drop its spans to O"


def _done(message: str) -> None:
    st.session_state["cw_labels_note"] = message
    st.rerun()


def _apply(call, message: str) -> None:  # noqa: ANN001 - a zero-argument action
    try:
        call()
    except (repo.StoreError, auth.Forbidden) as exc:
        st.error(md(exc))
    else:
        _done(message)


def label_settings(lead: repo.UserInfo, project: repo.ProjectInfo) -> None:
    """Show the types and the forms that change them."""
    st.subheader("Entity types")
    note = st.session_state.pop("cw_labels_note", None)
    if note:
        st.success(md(note))
    types = repo.label_types(project.settings)
    if types:
        st.dataframe(
            pd.DataFrame(
                [(i + 1, t.type, t.key, t.color) for i, t in enumerate(types)],
                columns=["position", "type", "key", "colour"],
            ),
            hide_index=True,
        )
    else:
        st.caption("This project accepts any tag: there are no types to configure.")
    _add_form(lead, project, types)
    if types:
        _edit_form(lead, project, types)
        _delete_form(lead, project, types)
    history = repo.label_changes(state.engine(), project.id)
    if history:
        with st.expander(f"Change history ({len(history)})"):
            st.dataframe(
                pd.DataFrame(
                    [
                        (c.created_at, c.user_name, c.action, _mapping(c.mapping), c.rewritten)
                        for c in history
                    ],  # fmt: skip
                    columns=["when", "who", "change", "labels mapped", "tag lists rewritten"],
                ),
                hide_index=True,
            )


def _mapping(mapping: dict[str, str | None]) -> str:
    return ", ".join(f"{old} → {new or 'O'}" for old, new in mapping.items())


def _add_form(lead: repo.UserInfo, project: repo.ProjectInfo, types: list) -> None:
    with st.form("add_type", clear_on_submit=True):
        name = st.text_input("New type", max_chars=60, placeholder="e.g. DATE")
        add = st.form_submit_button("Add type")
    if add and name.strip():
        call = lambda: state.service().add_label_type(lead, project.id, name.strip())  # noqa: E731
        _apply(call, f"Added the type {name.strip()}.")


def _edit_form(lead: repo.UserInfo, project: repo.ProjectInfo, types: list) -> None:
    names = [t.type for t in types]
    chosen = st.selectbox("Change the type", names, key="edit_type_name")
    current = types[names.index(chosen)]
    used = {t.key for t in types if t.type != chosen}
    keys = [k for k in repo.KEYS if k not in used]
    with st.form(f"edit_type_{chosen}"):
        rename = st.text_input("Name", value=chosen, max_chars=60)
        colour = st.color_picker("Colour", value=current.color)
        key = st.selectbox("Key", keys, index=keys.index(current.key))
        position = st.number_input(
            "Position", min_value=1, max_value=len(types), value=names.index(chosen) + 1
        )
        save = st.form_submit_button("Save type")
    if save:
        new = rename.strip()
        call = lambda: state.service().update_label_type(  # noqa: E731
            lead, project.id, chosen, rename=new, color=colour, key=key, position=position - 1
        )
        what = f"Renamed {chosen} to {new}" if new != chosen else f"Saved {chosen}"
        _apply(call, f"{what}.")


def _delete_form(lead: repo.UserInfo, project: repo.ProjectInfo, types: list) -> None:
    names = [t.type for t in types]
    chosen = st.selectbox("Delete the type", names, index=None, key="delete_type_name")
    if chosen is None:
        return
    used = repo.label_usage(state.engine(), project.id, [chosen])[chosen]
    others = [n for n in names if n != chosen]
    into = None
    if used:
        st.warning(
            f"{used:,} stored labels (annotations and gold) use {md(chosen)}. "
            "What should happen to its spans?"
        )
        choice = st.radio(
            "Its spans", [f"merge into {n}" for n in others] + [_DROP_LABEL], key="delete_into"
        )
        into = repo.DROP if choice == _DROP_LABEL else choice.removeprefix("merge into ")
    if st.button(f"Delete {chosen}", type="primary", key="delete_type"):
        call = lambda: state.service().remove_label_type(lead, project.id, chosen, into)  # noqa: E731
        outcome = "dropped to O" if into == repo.DROP else f"merged into {into}" if into else ""
        _apply(call, f"Deleted {chosen}" + (f"; its spans {outcome}." if outcome else "."))
