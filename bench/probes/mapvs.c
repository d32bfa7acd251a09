/* A 256 MiB blocking read into a mapped CL_MEM_ALLOC_HOST_PTR buffer against a blocking read
 * map of the same device buffer (no events, plain queue), best and median of 15, ms. */
#include "probe.h"
int main(int argc,char**argv){
  const char*want=argc>1?argv[1]:"vkcl"; cl_device_id d=probe_device(want); cl_int e;
  cl_context c=clCreateContext(0,1,&d,0,0,&e); cl_command_queue q=clCreateCommandQueueWithProperties(c,d,0,&e);
  size_t n=256u<<20; cl_mem b=clCreateBuffer(c,0,n,0,&e); char z=1; clEnqueueFillBuffer(q,b,&z,1,0,n,0,0,0);
  cl_mem pb=clCreateBuffer(c,CL_MEM_ALLOC_HOST_PTR,n,0,&e);
  char*pin=clEnqueueMapBuffer(q,pb,CL_TRUE,CL_MAP_READ|CL_MAP_WRITE,0,n,0,0,0,&e); memset(pin,0,n); clFinish(q);
  double t[4][15];
  for(int r=0;r<15;r++){
    double t0=now()*1e3; clEnqueueReadBuffer(q,b,CL_TRUE,0,n,pin,0,0,0); double t1=now()*1e3;
    char*m=clEnqueueMapBuffer(q,b,CL_TRUE,CL_MAP_READ,0,n,0,0,0,&e); double t2=now()*1e3;
    clEnqueueUnmapMemObject(q,b,m,0,0,0); clFinish(q); double t3=now()*1e3;
    clEnqueueWriteBuffer(q,b,CL_TRUE,0,n,pin,0,0,0); double t4=now()*1e3;
    t[0][r]=t1-t0; t[1][r]=t2-t1; t[2][r]=t3-t2; t[3][r]=t4-t3;}
  const char*nm[4]={"read pinned","map read","unmap+finish","write pinned"};
  for(int k=0;k<4;k++){qsort(t[k],15,sizeof(double),cmp_double); printf("%s %-13s best %.3f median %.3f ms\n",want,nm[k],t[k][0],t[k][7]);}
  return 0;}
