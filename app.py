"""cwal web app: the router. ``streamlit run app.py``

Signed out, the only page is the sign-in (or, on a fresh database, the first lead's setup). Signed
in, annotators see the annotation pages and leads also the lead pages. Hiding a page is only
convenience: every lead page and lead action checks the role again (``ui.auth``).
"""

from __future__ import annotations

import streamlit as st

from ui import auth, preload, prepare, presence, state, warmup

st.set_page_config(page_title="cwal", page_icon=":material/label:", layout="wide")
state.check_database()  # a damaged database file: what to do, before anything opens it
warmup.start()  # once per process: the lead views are computed while the lead signs in
prepare.start()  # once per process: the model's compiled code, before the first submit

ANNOTATOR_PAGES = [
    st.Page("pages/annotate.py", title="Annotate", icon=":material/edit:", default=True),
    st.Page("pages/progress.py", title="My progress", icon=":material/trending_up:"),
    st.Page("pages/guidelines.py", title="Guidelines", icon=":material/menu_book:"),
]
# The lead pages; later issues append theirs (dashboard, error analysis, review, ...) here.
LEAD_PAGES = [
    st.Page("pages/dashboard.py", title="Dashboard", icon=":material/monitoring:"),
    st.Page("pages/error_analysis.py", title="Error analysis", icon=":material/troubleshoot:"),
    st.Page("pages/review.py", title="Review", icon=":material/rule:"),
    st.Page("pages/compare_strategies.py", title="Compare strategies", icon=":material/compare:"),
    st.Page("pages/add_files.py", title="Files & settings", icon=":material/upload_file:"),
    st.Page("pages/export.py", title="Export", icon=":material/download:"),
    st.Page("pages/members.py", title="Members", icon=":material/groups:"),
]
# Reviewers (and leads) settle disagreements between independent annotators.
REVIEW_PAGES = [
    st.Page("pages/agreement.py", title="Agreement", icon=":material/handshake:"),
    st.Page("pages/adjudication.py", title="Adjudication", icon=":material/gavel:"),
]
# The administrator's pages (a user whose account role is lead): every project, every account.
ADMIN_PAGES = [
    st.Page("pages/projects.py", title="Projects", icon=":material/folder:"),
    st.Page("pages/users.py", title="Users", icon=":material/group:"),
]


def sidebar(user) -> str | None:
    """Who is signed in, the project to work on, and sign-out (and, for a lead, ``ui.preload``);
    returns the user's role on the chosen project."""
    with st.sidebar:
        st.caption("Signed in as")
        st.text(f"{user.name} ({user.role})")
        projects = state.projects()
        if projects:
            current = state.current_project()
            ids = [p.id for p in projects]
            names = {p.id: p.name for p in projects}
            chosen = st.selectbox(
                "Project",
                ids,
                index=ids.index(current.id) if current else 0,
                format_func=names.__getitem__,
            )
            state.choose_project(chosen)
        elif user.role != "lead":
            st.info("You are not a member of any project yet: ask a project lead to add you.")
        if st.button("Sign out", width="stretch"):
            auth.sign_out()
            st.rerun()
    current = state.current_project()
    role = None if current is None else auth.project_role(user, current.id)
    if user.role == "lead" or role == "lead":
        preload.chart_code()  # the browser loads the chart code before the first lead page
    return role


user = auth.current_user()
presence.register(None if user is None else user.id)  # leases go back when the tab closes
presence.start()
auth.keep_cookie()  # the browser keeps (or forgets) the sign-in session's token
if user is None:
    # Every page's URL shows the sign-in form; once signed in, the same URL opens that page.
    login = [st.Page("pages/login.py", title="Sign in", icon=":material/login:", default=True)]
    for page in ANNOTATOR_PAGES + LEAD_PAGES + ADMIN_PAGES:
        if page.url_path:
            login.append(st.Page("pages/login.py", title="Sign in", url_path=page.url_path))
    navigation = st.navigation(login, position="hidden")
else:
    role = sidebar(user)
    sections = {"Annotation": ANNOTATOR_PAGES}
    if user.role == "lead" or role in ("lead", "reviewer"):
        sections["Review"] = REVIEW_PAGES
    if user.role == "lead" or role == "lead":
        sections["Lead"] = LEAD_PAGES
    if user.role == "lead":
        sections["Administration"] = ADMIN_PAGES
    navigation = st.navigation(
        sections, expanded=True
    )  # a lead's 14 pages, none behind "View more"
with warmup.page_run():  # background refreshes wait for the page (and others) to be drawn
    navigation.run()
