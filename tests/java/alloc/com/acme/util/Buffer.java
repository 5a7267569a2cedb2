package com.acme.util;

/**
 * Allocated only by {@link Pool#make}, a helper in the unaccounted package
 * com.acme.util: each Buffer is charged to the account of Pool.make's caller
 * (AllocWork's KNOWN FACTS). 32 bytes (12-byte header, int, two longs).
 */
public final class Buffer {
    int capacity;
    long head;
    long tail;

    Buffer(int capacity) {
        this.capacity = capacity;
    }
}
