"""The TypeScript client is generated from frontend/openapi.json: it must be the app's current document."""
import json
from pathlib import Path

from app.main import app

ROOT = Path(__file__).resolve().parents[2]


def test_committed_openapi_document_matches_the_app():
    committed = json.loads((ROOT / "frontend" / "openapi.json").read_text())
    assert committed == json.loads(json.dumps(app.openapi())), "run ./hostbench openapi && (cd frontend && npm run gen:api)"
