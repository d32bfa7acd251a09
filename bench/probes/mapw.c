/* 256 MiB write-invalidate map + host fill + unmap + clFinish of a device buffer against a
 * blocking write from a mapped ALLOC_HOST_PTR buffer; profiling queue: the GPU's own copy time
 * (START..END of the unmap's / the write's event). Best and median of 15, ms. */
#include "probe.h"
static double gpu(cl_event ev){cl_ulong a,z; clGetEventProfilingInfo(ev,CL_PROFILING_COMMAND_START,8,&a,0); clGetEventProfilingInfo(ev,CL_PROFILING_COMMAND_END,8,&z,0); clReleaseEvent(ev); return (z-a)*1e-6;}
int main(int argc,char**argv){
  const char*want=argc>1?argv[1]:"vkcl"; cl_device_id d=probe_device(want); cl_int e;
  cl_queue_properties qp[]={CL_QUEUE_PROPERTIES,CL_QUEUE_PROFILING_ENABLE,0};
  cl_context c=clCreateContext(0,1,&d,0,0,&e); cl_command_queue q=clCreateCommandQueueWithProperties(c,d,qp,&e);
  size_t n=256u<<20; cl_mem b=clCreateBuffer(c,0,n,0,&e); char z=1; clEnqueueFillBuffer(q,b,&z,1,0,n,0,0,0);
  cl_mem pb=clCreateBuffer(c,CL_MEM_ALLOC_HOST_PTR,n,0,&e);
  char*pin=clEnqueueMapBuffer(q,pb,CL_TRUE,CL_MAP_READ|CL_MAP_WRITE,0,n,0,0,0,&e); memset(pin,0,n); clFinish(q);
  enum{R=15}; double t[7][R];
  for(int r=0;r<R;r++){
    cl_event e1,e2;
    double t0=now()*1e3; char*m=clEnqueueMapBuffer(q,b,CL_TRUE,CL_MAP_WRITE_INVALIDATE_REGION,0,n,0,0,0,&e); double t1=now()*1e3;
    memset(m,r,n);
    double t2=now()*1e3; clEnqueueUnmapMemObject(q,b,m,0,0,&e1); double t3=now()*1e3; clFinish(q); double t4=now()*1e3;
    clEnqueueWriteBuffer(q,b,CL_TRUE,0,n,pin,0,0,&e2); double t5=now()*1e3;
    t[0][r]=t1-t0; t[1][r]=t3-t2; t[2][r]=t4-t3; t[3][r]=(t1-t0)+(t4-t2); t[4][r]=gpu(e1); t[5][r]=t5-t4; t[6][r]=gpu(e2);}
  const char*nm[7]={"map call","unmap call","finish","map+unmap+finish","unmap GPU copy","write pinned","write GPU copy"};
  for(int k=0;k<7;k++){qsort(t[k],R,sizeof(double),cmp_double); printf("%s %-17s best %.3f median %.3f ms\n",want,nm[k],t[k][0],t[k][R/2]);}
  return 0;}
