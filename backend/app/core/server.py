"""uvicorn's HTTP protocol with a deadline for a request's headers (issue 27, item 1; docs/security.md, "Request
limits").

uvicorn times out only an idle connection between two requests (--timeout-keep-alive). A connection that opens and
sends nothing, or sends part of a request's headers and then nothing, is kept for ever: each holds a socket (a
file descriptor) of the API process, and enough of them leave none for a runner's lease renewal. Here a request's
headers must be complete within HEADER_DEADLINE_S of the connection's opening, or of the first byte of the request
after the one before it; else the connection is closed. Once the headers are in, the body has its own deadline
(app.core.body), and a long poll or a live stream is not cut (its headers were on time).

Selected on the command line: `uvicorn app.main:app --http app.core.server:HeaderDeadline` (the API's processes
in `./hostbench up`, the compose deployment and the tests' API processes)."""
import asyncio

from app.core.bounds import HEADER_DEADLINE_S

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Protocol
except ImportError:  # pragma: no cover - httptools is in requirements.lock; h11 is uvicorn's fallback
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Protocol  # type: ignore[assignment]


class HeaderDeadline(_Protocol):
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self._between_requests():
            self._arm()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if not self._between_requests():
            self._disarm()  # the headers are in: the request runs

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(HEADER_DEADLINE_S, self._late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _late(self) -> None:
        self._header_timer = None
        if self._between_requests() and not self.transport.is_closing():
            self.transport.close()
