"""The table events (bets, outcome and void of a round): one edge, two ways in.

- `direct_route.FastPathApp`: `POST /v1/tables/{table}/rounds/{round}/{kind}`, taken
  before FastAPI's own stack, inside the app's edge middleware. Nearly every table
  event comes in this way.
- `fastapi_routes.table_routes`: the FastAPI routes, which document the OpenAPI
  operations and take what the direct route leaves (a proxy's `root_path`, an app
  served without it).

Both call the same handlers (`handlers.table_event_handlers`), which decode a body once
into its command (`decoding.decode`: msgspec, or the pydantic models of
`request_models` to word a 422) and hand it to the writer.
"""
