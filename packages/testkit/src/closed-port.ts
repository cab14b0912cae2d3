/**
 * A TCP port on 127.0.0.1 that nothing listens on. A port "just closed" after listening on port 0 is not
 * safe: with tests running side by side the kernel may hand it to another test's server a moment later.
 * Port 1 (tcpmux) needs root to bind and no test binds it, so a connection to it is always refused.
 */
export const CLOSED_PORT = 1;
