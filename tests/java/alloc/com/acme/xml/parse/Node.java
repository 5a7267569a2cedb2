package com.acme.xml.parse;

/** Kept alive by Parser.nodes. 40 bytes (header, int, reference, two longs). */
public final class Node {
    int id;
    Node parent;
    long start;
    long end;

    Node(int id, Node parent) {
        this.id = id;
        this.parent = parent;
    }
}
