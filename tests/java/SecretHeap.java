/*
 * SecretHeap - plants known secrets in a Java heap for heapsh --redact's
 * tests (tests/t_redact.sh), then waits to be dumped.
 *
 * Usage:
 *   java -cp DIR SecretHeap
 *       Build the heap, print "ready <pid>" on stdout, then block until a
 *       line is read from stdin or stdin is closed, then exit 0. Meant for
 *       `jcmd <pid> GC.heap_dump [-gz=1] FILE`.
 *
 * KNOWN FACTS (tests assert these; keep this list in sync with the code)
 *
 *   Vault, one instance, reachable from static SecretHeap.vault:
 *     String password = "P\u00e4ssw\u00f6rd-\u03a9mega-7731" (non-ASCII, a UTF-16 String:
 *       its Latin-1, UTF-8 and UTF-16 encodings differ)
 *     String token = "tok3n-ASCII-only-91aa" (a compact Latin-1 String)
 *     char[] pin = "cHaRsEcReT-4410" as a char[]
 *     byte[] key = "bYtEsEcReT-8829" in ASCII
 *     long card = 0x5EC2E7C0FFEE1234L
 *   static long SecretHeap.staticSecret = 0x51A71C5EC2E70042L
 *   KeptBox, one instance, reachable from static SecretHeap.box:
 *     String label = "keptlabel-\u00dc-3302" (non-ASCII)
 *     long number = 0x0B0E0C0D0E0F1122L
 *   Holders: 200 Holder objects in an array, each holding a 64-byte byte[]
 *     and a Vault-free String, so the histogram has rows of our own classes.
 *   A thread named "secret-thread-\u03a9x" waits with a Holder on its stack.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class SecretHeap {
	static class Vault {
		String password = new String("P\u00e4ssw\u00f6rd-\u03a9mega-7731");
		String token = new String("tok3n-ASCII-only-91aa");
		char[] pin = "cHaRsEcReT-4410".toCharArray();
		byte[] key = "bYtEsEcReT-8829".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
		long card = 0x5EC2E7C0FFEE1234L;
	}

	static class KeptBox {
		String label = new String("keptlabel-\u00dc-3302");
		long number = 0x0B0E0C0D0E0F1122L;
	}

	static class Holder {
		byte[] data = new byte[64];
		String name;
		Holder next;

		Holder(int i, Holder n) {
			name = "holder-" + i;
			next = n;
			data[0] = (byte) i;
		}
	}

	static Vault vault = new Vault();
	static KeptBox box = new KeptBox();
	static long staticSecret = 0x51A71C5EC2E70042L;
	static Holder[] holders = new Holder[200];

	public static void main(String[] args) throws Exception {
		Holder prev = null;
		for (int i = 0; i < holders.length; i++)
			holders[i] = prev = new Holder(i, i % 10 == 0 ? null : prev);
		Object lock = new Object();
		Thread t = new Thread(() -> {
			Holder local = new Holder(999, null);
			synchronized (lock) {
				try {
					lock.wait();
				} catch (InterruptedException e) {
					// exit
				}
			}
			System.out.println(local.name);
		}, "secret-thread-\u03a9x");
		t.setDaemon(true);
		t.start();
		System.out.println("ready " + ProcessHandle.current().pid());
		System.out.flush();
		new BufferedReader(new InputStreamReader(System.in)).readLine();
	}
}
