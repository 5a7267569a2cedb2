package com.acme.web;

/** Kept alive by WebHandler.sessions. 24 bytes (header, int, long). */
public final class Session {
    int id;
    long created;

    Session(int id) {
        this.id = id;
        this.created = id;
    }
}
