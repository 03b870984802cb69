"""App-only glue between the Streamlit pages and the store: the sign-in gate and role checks
(``auth``), lead actions (``actions``), process-wide resources (``state``), the annotate page's
controller (``annotate``), shared form pieces (``forms``), escaping of untrusted text (``safe``) and
the token editor component (``editor``)."""
