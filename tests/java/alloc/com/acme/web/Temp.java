package com.acme.web;

/** Garbage as soon as WebHandler.handle returns. 16 bytes (header, int). */
public final class Temp {
    int id;

    Temp(int id) {
        this.id = id;
    }
}
