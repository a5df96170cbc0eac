# schemathesis hooks for `make api-fuzz` (loaded through SCHEMATHESIS_HOOKS).
#
# docs/openapi.json declares IANA time zone names with a format of its own, `iana-time-zone`: which names exist is the
# tz database's call, which no pattern can state. A generator of valid data needs names to draw from; these are
# canonical names every tz database has, in the shapes the server reads (one and two slashes, UTC).
import schemathesis
from hypothesis import strategies as st

schemathesis.openapi.format(
    "iana-time-zone",
    st.sampled_from([
        "UTC", "Europe/Rome", "Europe/London", "America/New_York", "America/Argentina/Buenos_Aires", "America/Sao_Paulo",
        "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Pacific/Auckland", "Pacific/Chatham", "Africa/Nairobi",
    ]),
)
