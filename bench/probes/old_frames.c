#include <jvmti.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
static jvmtiEnv *E; static long hits;
static void JNICALL on_s(jvmtiEnv *e, JNIEnv *j, jthread t, jobject o, jclass k, jlong s){ hits++; }
static void JNICALL on_init(jvmtiEnv *e, JNIEnv *j, jthread t){
  const char *m = getenv("PROBE_MODE");
  if (!m || !strcmp(m,"none")) return;
  (*e)->SetHeapSamplingInterval(e, 0);
  if (!strcmp(m,"all")) (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
  else (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, t); /* main thread only */
}
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *o, void *r){
  (*vm)->GetEnv(vm,(void**)&E,JVMTI_VERSION_11);
  jvmtiCapabilities c; memset(&c,0,sizeof c); c.can_generate_sampled_object_alloc_events=1;
  (*E)->AddCapabilities(E,&c);
  jvmtiEventCallbacks cb; memset(&cb,0,sizeof cb); cb.SampledObjectAlloc=on_s; cb.VMInit=on_init;
  (*E)->SetEventCallbacks(E,&cb,sizeof cb);
  (*E)->SetEventNotificationMode(E,JVMTI_ENABLE,JVMTI_EVENT_VM_INIT,NULL);
  return 0;
}
