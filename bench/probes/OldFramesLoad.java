import java.util.*;
public class OldFramesLoad {
  static volatile Object sink;
  public static void main(String[] a) throws Exception {
    Thread w = new Thread(() -> {
      long t0 = System.nanoTime(); long n = 0;
      for (int r = 0; r < 8; r++) {
        long s = System.nanoTime(); long k = 0;
        while (System.nanoTime() - s < 500_000_000L) { for (int i=0;i<1000;i++){ sink = new int[4]; sink = new ArrayList<>(2);} k++; }
        if (r >= 2) n += k;
      }
      System.out.println("ops/s " + (n*1000*2/3.0));
    });
    w.start(); w.join();
  }
}
