# schemathesis hooks for `make api-fuzz` (loaded through SCHEMATHESIS_HOOKS).
#
# docs/openapi.json declares two strings with formats of its own, whose valid values no pattern can state, so a
# generator of valid data needs values to draw from:
# - `iana-time-zone`: which names exist is the tz database's call; these are canonical names every tz database has, in
#   the shapes the server reads (one and two slashes, UTC);
# - `webhook-url`: an https URL whose host resolves to public addresses only; names that do not resolve (yet) are
#   taken at creation, address literals must be public.
import schemathesis
from hypothesis import strategies as st

schemathesis.openapi.format(
    "iana-time-zone",
    st.sampled_from([
        "UTC", "Europe/Rome", "Europe/London", "America/New_York", "America/Argentina/Buenos_Aires", "America/Sao_Paulo",
        "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Pacific/Auckland", "Pacific/Chatham", "Africa/Nairobi",
    ]),
)

schemathesis.openapi.format(
    "webhook-url",
    st.sampled_from([
        "https://hooks.example.com/surge", "https://receiver.example.org:8443/webhooks/surge?team=7",
        "https://8.8.8.8/hooks/surge", "https://[2001:4860:4860::8888]/surge", "https://1.1.1.1:443/",
    ]),
)


# A list's `cursor` is opaque: only the server's own `nextCursor` values are valid, and no schema can state which those
# are (any other is the documented 400 `unknown-cursor`). Generated cases go without one: the first page.
@schemathesis.hook
def map_query(ctx, query):
    if query and "cursor" in query:
        return {name: value for name, value in query.items() if name != "cursor"}
    return query


# An entity tag is opaque as well: only the resource's current `ETag` lets a PATCH with `If-Match` through, and any
# other is the documented 412 `precondition-failed`. Generated changes go without one (ConditionalRequestTests and
# IdentitySystemTests cover the header). Dropped just before each call, so that every phase (the documented example,
# the coverage cases, the fuzzing) goes without it.
@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if case.headers and "If-Match" in case.headers:
        del case.headers["If-Match"]
