/* Launch + clFinish of a tiny kernel: plain queue without / with event, profiling queue without /
 * with event. Median and best of N, us. Usage: evlat2 PLATFORM_SUBSTRING */
#include "probe.h"
int main(int argc,char**argv){
  const char*want=argc>1?argv[1]:"vkcl"; cl_device_id d=probe_device(want); cl_int e;
  cl_queue_properties qp[]={CL_QUEUE_PROPERTIES,CL_QUEUE_PROFILING_ENABLE,0};
  cl_context c=clCreateContext(0,1,&d,0,0,&e);
  cl_command_queue qs[2]={clCreateCommandQueueWithProperties(c,d,0,&e),clCreateCommandQueueWithProperties(c,d,qp,&e)};
  const char*src="kernel void bump(global int *a){a[get_global_id(0)]++;}"; cl_program pr=clCreateProgramWithSource(c,1,&src,0,&e);
  clBuildProgram(pr,1,&d,0,0,0); cl_kernel ks[2]={clCreateKernel(pr,"bump",&e),clCreateKernel(pr,"bump",&e)};
  cl_mem b=clCreateBuffer(c,0,1<<20,0,&e); for(int j=0;j<2;j++) clSetKernelArg(ks[j],0,sizeof b,&b);
  size_t g=1024,l=64;
  for(int qi=0;qi<2;qi++){ for(int i=0;i<200;i++) clEnqueueNDRangeKernel(qs[qi],ks[qi],1,0,&g,&l,0,0,0); clFinish(qs[qi]);}
  enum{N=3000}; static double t[4][N]; cl_ulong s=0;
  for(int i=0;i<N;i++){
    for(int m=0;m<4;m++){
      cl_command_queue q=qs[m>>1]; cl_kernel k=ks[m>>1]; int w=m&1;
      cl_event ev=0; double t0=now();
      clEnqueueNDRangeKernel(q,k,1,0,&g,&l,0,0,w?&ev:0); clFinish(q); t[m][i]=(now()-t0)*1e6;
      if(ev){ if(m==3){cl_ulong a,z; clGetEventProfilingInfo(ev,CL_PROFILING_COMMAND_START,8,&a,0); clGetEventProfilingInfo(ev,CL_PROFILING_COMMAND_END,8,&z,0); s+=z-a;} clReleaseEvent(ev);}
    }
  }
  const char*names[4]={"plain, no event","plain, event","profiling, no event","profiling, event"};
  for(int m=0;m<4;m++){qsort(t[m],N,sizeof(double),cmp_double); printf("%-8s %-20s median %6.2f best %6.2f p90 %6.2f\n",want,names[m],t[m][N/2],t[m][0],t[m][N*9/10]);}
  printf("%s mean kernel START..END %.2f us\n",want,(double)s/N/1e3);
  return 0;}
