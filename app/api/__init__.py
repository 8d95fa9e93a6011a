"""Entry points over HTTP: `create_app`, routes per audience, schemas, problems, auth."""
